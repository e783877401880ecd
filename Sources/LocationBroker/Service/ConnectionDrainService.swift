import Atomics
import BrokerCore
import BrokerProtocol
import Logging
import ServiceLifecycle

/// On graceful shutdown (SIGTERM, SIGINT), before the HTTP server stops: refuse new WebSockets, close every
/// open one with 1001, and wait for them to go, at most `grace`.
///
/// It must come after the application in the ServiceGroup: shutdown runs in reverse order, so this runs first.
struct ConnectionDrainService: Service {
    let hub: Hub
    let draining: DrainFlag
    let grace: Duration
    let logger: Logger

    package func run() async throws {
        try? await gracefulShutdown()
        draining.start()
        let open = hub.connectionCount
        logger.notice("shutting down: closing websockets with 1001", metadata: ["connections": "\(open)"])
        hub.closeAll(code: CloseCode.goingAway, reason: "server shutting down")
        guard !(await hub.connectionsGone(before: .now + grace)) else { return }
        logger.warning("shutdown grace ran out; cutting the websockets still open", metadata: ["connections": "\(hub.connectionCount)"])
        hub.abortAll()
        _ = await hub.connectionsGone(before: .now + .seconds(3))
    }
}

/// Set once shutdown begins; read by every upgrade.
final class DrainFlag: Sendable {
    private let value = ManagedAtomic<Bool>(false)

    init() {}

    var isSet: Bool { value.load(ordering: .relaxed) }

    func start() { value.store(true, ordering: .relaxed) }
}
