import FleetSimulation

/// Parses lengths of time for the options.
enum SimDurationParser {
    static func parse(_ text: String) -> Double? {
        SimDuration(parsing: text)?.seconds
    }
}
