import Logging

extension Hub {
    /// Registers a connection opened with a verified token (or watch link), whose frames go to `sink`.
    package func connect(_ verified: VerifiedIdentity, sink: any FrameSink, logger: Logger) -> ClientConnection {
        connect(identity: verified.identity, expiresAt: verified.expiresAt, watch: verified.watch, sink: sink, logger: logger)
    }
}
