import BrokerProtocol
import Logging

/// One client's connection as the hub sees it: who it is, what it watches, and the sink its frames go to.
///
/// Shared between the connection's reader and the hub; every mutable part is behind a lock, a leaf taken
/// under a shard lock (docs/LOCK-ORDER.md).
package final class ClientConnection: Sendable {
    /// Unique within the process.
    package let id: UInt64
    /// The verified identity; publishing goes to the channel of the same name.
    package let identity: String
    /// The identity's hash, as the channel registry looks channels up by: worked out once, not on every publish.
    let channelHash: Int
    /// When the token expires, in seconds since the Unix epoch.
    package let expiresAt: Int64
    /// Set when the connection was opened with a watch link: it may watch that one donation and do nothing else.
    package var watch: WatchScope? { watchLink?.scope }
    /// The watch link's scope, boxed: most connections have none, and inline it would cost each of them ~50 bytes.
    private let watchLink: WatchLinkBox?
    /// Where the hub writes this connection's frames.
    package let sink: any FrameSink
    /// The broker's logger, without this connection's metadata (see ``logger``).
    private let baseLogger: Logger
    /// Subscribed channels, each with the donation that allowed it.
    private let subscriptions = LockedValue(ConnectionSubscriptions())

    package init(id: UInt64, identity: String, expiresAt: Int64, watch: WatchScope? = nil, sink: any FrameSink, logger: Logger) {
        self.id = id
        self.identity = identity
        self.channelHash = ChannelRegistry.Key.hash(of: identity)
        self.expiresAt = expiresAt
        self.watchLink = watch.map(WatchLinkBox.init)
        self.sink = sink
        self.baseLogger = logger
    }

    /// A logger that names this connection and its identity. Made when something is logged rather than kept:
    /// the metadata would cost every idle connection a few hundred bytes.
    package var logger: Logger {
        var logger = baseLogger
        logger[metadataKey: "connection"] = "\(id)"
        logger[metadataKey: "identity"] = "\(identity)"
        return logger
    }

    /// Logs `message` at `debug` with ``logger``'s metadata; builds nothing when `debug` is off (every connection
    /// logs its opening and closing, and a flood of refused frames one line each).
    package func debug(_ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata? = nil) {
        guard baseLogger.logLevel <= .debug else { return }
        logger.debug(message(), metadata: metadata())
    }

    /// The donation this connection watches `channel` for, if subscribed.
    package func donation(for channel: String) -> String? {
        subscriptions.withLock { $0.donation(for: channel) }
    }

    /// Every subscribed channel.
    package var subscribedChannels: [String] {
        subscriptions.withLock { $0.channels }
    }

    /// How many channels are subscribed.
    package var subscriptionCount: Int {
        subscriptions.withLock { $0.count }
    }

    func recordSubscription(channel: String, donation: String) {
        subscriptions.withLock { $0.set(channel: channel, donation: donation) }
    }

    func removeSubscription(channel: String) {
        _ = subscriptions.withLock { $0.remove(channel: channel) }
    }
}

/// A watch link's scope, on the heap.
private final class WatchLinkBox: Sendable {
    let scope: WatchScope

    init(_ scope: WatchScope) {
        self.scope = scope
    }
}
