import Logging

/// Opens the connections of a client that reconnects by ``ConnectionStateMachine``'s rules: fetches a token when
/// it has none, when the one it has expires within ``renewalMargin``, or when the machine asks for a fresh one (the
/// broker refused it), then connects. Never before every attempt: a broker outage must not become a flood on the
/// backend's token endpoint. ``DonationWatcher`` and
/// ``VolunteerPublisher`` share it, so both fetch, renew and diagnose the same way.
struct ReconnectingConnector {
    let url: String
    let openTimeout: Duration
    let logger: Logger
    let token: @Sendable () async throws -> String
    let tls: BrokerTLS?
    /// A token that expires within this is renewed before connecting.
    let renewalMargin: Duration = .seconds(60)
    /// The token of the last connection; kept until the state machine asks for a fresh one.
    private(set) var currentToken: String?

    init(url: String, openTimeout: Duration, tls: BrokerTLS? = nil, logger: Logger, token: @escaping @Sendable () async throws -> String) {
        self.url = url
        self.tls = tls
        self.openTimeout = openTimeout
        self.logger = logger
        self.token = token
    }

    /// What an attempt gave.
    enum Attempt {
        case opened(BrokerConnection)
        /// How the attempt ended, to hand to ``ConnectionStateMachine/ended(_:now:)``.
        case failed(ConnectionStateMachine.Ending)
    }

    /// One attempt for the machine's `.connect` action.
    mutating func open(keepalive: Duration, renewToken: Bool) async -> Attempt {
        if renewToken || currentToken.map({ TokenExpiry.isNear($0, margin: renewalMargin) }) ?? true {
            do {
                currentToken = try await token()
            } catch {
                return .failed(.unreachable("the token provider failed: \(error)"))
            }
        }
        do {
            return .opened(
                try await BrokerConnection.connect(
                    url: url, token: currentToken, tls: tls, timeout: openTimeout, keepalive: keepalive, closeTimeout: .seconds(2), logger: logger))
        } catch {
            return .failed(await UpgradeDiagnosis.ending(for: error, url: url, token: currentToken))
        }
    }
}
