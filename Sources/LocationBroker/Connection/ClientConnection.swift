import BrokerProtocol
import Logging
import NIOCore
import Synchronization

/// One client's WebSocket as the hub sees it: who it is, what it watches, and its outbound queue.
///
/// Shared between the connection's reader, its writer and the hub; every mutable part is behind a lock.
/// Lock order: hub shard lock, then this connection's lock, then its outbox's lock.
final class ClientConnection: Sendable {
    /// Unique within the process.
    let id: UInt64
    /// The verified identity; publishing goes to the channel of the same name.
    let identity: String
    /// When the token expires, in seconds since the Unix epoch.
    let expiresAt: Int64
    /// Set when the connection was opened with a watch link: it may watch that one donation and do nothing else.
    let watch: WatchScope?
    let outbox: Outbox
    /// The broker's logger, without this connection's metadata (see ``logger``).
    private let baseLogger: Logger
    /// Subscribed channels, each with the donation that allowed it.
    private let subscriptions = Mutex<[String: String]>([:])

    init(
        id: UInt64, identity: String, expiresAt: Int64, watch: WatchScope? = nil, outboxLimit: Int, stallLimit: Duration = .seconds(10),
        logger: Logger
    ) {
        self.id = id
        self.identity = identity
        self.expiresAt = expiresAt
        self.watch = watch
        self.outbox = Outbox(limit: outboxLimit, stallLimit: stallLimit)
        self.baseLogger = logger
    }

    /// A logger that names this connection and its identity. Made when something is logged rather than kept:
    /// the metadata would cost every idle connection a few hundred bytes.
    var logger: Logger {
        var logger = baseLogger
        logger[metadataKey: "connection"] = "\(id)"
        logger[metadataKey: "identity"] = "\(identity)"
        return logger
    }

    /// The donation this connection watches `channel` for, if subscribed.
    func donation(for channel: String) -> String? {
        subscriptions.withLock { $0[channel] }
    }

    /// Every subscribed channel.
    var subscribedChannels: [String] {
        subscriptions.withLock { Array($0.keys) }
    }

    /// How many channels are subscribed.
    var subscriptionCount: Int {
        subscriptions.withLock { $0.count }
    }

    func recordSubscription(channel: String, donation: String) {
        subscriptions.withLock { $0[channel] = donation }
    }

    func removeSubscription(channel: String) {
        _ = subscriptions.withLock { $0.removeValue(forKey: channel) }
    }
}
