import LocationBroker

/// The process's entry point; everything else lives in the LocationBroker library.
@main
struct LocationBrokerMain {
    static func main() async {
        await LocationBrokerCommand.main()
    }
}
