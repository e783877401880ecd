import BrokerProtocol
import Logging

extension Hub {
    /// Registers a held long poll (PubNub's subscribe) as a subscriber of the hub, whose sink is woken when a
    /// position it may see is kept, as a WebSocket's sink is written to. A poll is not an open connection of its
    /// identity: it counts against the poll limits of its transport, not against `max_connections_per_identity`,
    /// and makes nobody online.
    /// - Returns: the poll's connection, to subscribe with ``watch(_:channel:)`` and to give back with ``unpark(_:)``.
    package func park(_ verified: VerifiedIdentity, sink: any FrameSink, logger: Logger) -> ClientConnection {
        let connection = ClientConnection(
            id: connections.makeID(), identity: verified.identity, expiresAt: verified.expiresAt, watch: verified.watch, sink: sink, logger: logger)
        connections.insert(connection)
        return connection
    }

    /// Subscribes a held poll to `channel` by the rule of a WebSocket `subscribe` by channel, without the
    /// `subscribed` reply a WebSocket gets: the poll reads what it may see with ``positions(on:after:for:)``.
    /// - Returns: the refusal, or `nil` when subscribed (or waiting for the cluster's bus).
    package func watch(_ poll: ClientConnection, channel: String) -> BrokerError? {
        subscriptions.subscribe(poll, .init(target: .channel(channel)), answering: false)
    }

    /// Forgets a poll ``park(_:sink:logger:)`` registered: its sink stops and its subscriptions end. A subscription
    /// still waiting for the cluster's bus is dropped when its shard is joined (it is no longer registered).
    package func unpark(_ connection: ClientConnection) {
        _ = forget(connection)
    }
}
