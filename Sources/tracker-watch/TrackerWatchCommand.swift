import ArgumentParser
import BrokerProtocol
import Foundation
import Logging
import WatchRendering

/// `tracker-watch`: a donor watches, live in a terminal, the volunteer carrying their donation.
@main
struct TrackerWatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tracker-watch",
        abstract: "Watch, live in a terminal, the volunteer who carries your donation.",
        discussion: """
            Full screen on a terminal: a map (H your home, I the institution, the volunteer's arrow and trail, \
            the destination in brackets, north up, a scale bar), the donation's state, distance, bearing, speed, \
            ETA, accuracy and the age of the last fix, and the events as they happen. It reconnects by itself and \
            catches up on the positions it missed. Press Ctrl-C to stop.

            With --plain, or when standard output is not a terminal, it prints one line per event instead, \
            timestamped in UTC. Set NO_COLOR to turn colours off.

            Exit status: 0 the donation was delivered; 1 tracking ended otherwise (cancelled, the volunteer \
            changed, deleted); 2 bad usage, or the broker refused the subscription (forbidden, not-found, \
            not-trackable); 3 the broker could not be reached or did not accept the token; 130 Ctrl-C.
            """
    )

    @Option(help: "The broker's WebSocket address, such as ws://127.0.0.1:8080 (the /v1/ws path is added if missing).")
    var broker: String

    @Option(help: "Your token (a JWT). Other users can see it in the process list: prefer --token-file.")
    var token: String?

    @Option(help: "A file that holds your token; whitespace around it is ignored.")
    var tokenFile: String?

    @Option(help: "The id of your donation to watch.")
    var donation: String?

    @Option(help: "The volunteer's channel (their e-mail) to watch instead of a donation id.")
    var channel: String?

    @Flag(help: "One line per event, for logs and scripts (the default when standard output is not a terminal).")
    var plain = false

    @Flag(help: "ASCII only, for terminals without Unicode.")
    var ascii = false

    func validate() throws {
        guard (token == nil) != (tokenFile == nil) else { throw ValidationError("give exactly one of --token and --token-file") }
        guard (donation == nil) != (channel == nil) else { throw ValidationError("give exactly one of --donation and --channel") }
        if let donation, !DonationID.isValid(donation) {
            throw ValidationError("--donation must be 1 to 128 characters of A-Z a-z 0-9 . _ : -")
        }
        if let channel, Identity.canonical(channel) == nil {
            throw ValidationError("--channel must be the volunteer's identity (e-mail), without spaces")
        }
        guard BrokerAddress.webSocketURL(broker) != nil else {
            throw ValidationError("--broker must be a ws:// or wss:// address, such as ws://127.0.0.1:8080")
        }
    }

    func run() async throws {
        let token = try TokenLoader.load(token: token, file: tokenFile)
        guard let url = BrokerAddress.webSocketURL(broker) else { throw ValidationError("--broker is not a usable address") }
        let target: ClientFrame.Target =
            if let donation { .donation(donation) } else { .channel(Identity.canonical(channel ?? "") ?? "") }

        let terminal = Terminal()
        let fullScreen = !plain && Terminal.outputIsTerminal
        let noColor = !(ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
        let formatter = PlainFormatter(ascii: ascii)
        let display: any WatchDisplay =
            fullScreen
            ? FullScreenDisplay(terminal: terminal, options: RenderOptions(ascii: ascii, colour: !noColor))
            : PlainDisplay(terminal: terminal, formatter: formatter)

        let signals = SignalTrap.install([SIGINT, SIGTERM]) { signal in
            terminal.restore()
            let line = formatter.line(
                for: WatchLogEntry(at: WatchSession.now(), kind: .ended, fields: [.init("reason", "interrupted")], text: "Stopped"))
            if !fullScreen { terminal.output(line + "\n") }
            Foundation.exit(signal == SIGINT ? 130 : 143)
        }
        let logger =
            fullScreen
            ? Logger(label: "tracker-watch", factory: { _ in SwiftLogNoOpLogHandler() })
            : {
                var logger = Logger(label: "tracker-watch", factory: { label in StreamLogHandler.standardError(label: label) })
                logger.logLevel = .error
                return logger
            }()

        let session = WatchSession(url: url, token: token, target: target, display: display, logger: logger)
        let end = await session.run()
        withExtendedLifetime(signals) {}
        if end.exitCode != 0 { throw ExitCode(end.exitCode) }
    }

    /// Like ArgumentParser's `main`, but bad usage exits with 2, the status the issue gives it, instead of 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                Terminal.writeAll(STDERR_FILENO, fullMessage(for: error) + "\n")
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
