import BrokerCore
import BrokerProtocol
import Foundation

/// How a channel's newest position is kept in `lb_last_positions`: under the keyed hash of the channel
/// (``ClusterKeys/channelKey(_:)``), sealed for that row, so the table holds no identity, no donation id and no
/// coordinate in clear, and a sealed value moved to another row does not open.
enum SealedLastPosition {
    /// How long a stored last position stays: older rows are swept, and ignored by a node that starts. (The
    /// `max_position_age` default: a position this old is not delivered live anyway.)
    static let retentionSeconds = LastPosition.retentionSeconds

    private struct Wire: Codable {
        var c: String
        var s: Int64
        var p: Position
        var t: [String]
        /// The position's seq in each donation's view; absent from a row stored without them.
        var v: [Int64]?
        var ls: Int64
    }

    /// The sealed value of `last`'s row, bound to its row key.
    static func seal(_ last: LastPosition, keys: ClusterKeys) throws -> (channelKey: String, sealed: String) {
        let wire = Wire(c: last.channel, s: last.seq, p: last.position, t: last.donations, v: last.viewSeqs, ls: last.seenAt)
        let channelKey = keys.channelKey(last.channel)
        return (channelKey, try seal(positionEvent: try JSONEncoder().encode(wire), channelKey: channelKey, keys: keys))
    }

    /// The sealed value of the row keyed `channelKey` made of a position event's plaintext (``ClusterEvent/plaintext()``),
    /// which carries every field of a row under the same names (``open(channelKey:sealed:keys:)`` ignores the
    /// event's kind and origin): the bus's writer encodes each position once, for the bus and for the store.
    /// `channelKey` must be ``ClusterKeys/channelKey(_:)`` of the channel the plaintext names, or the row will not open.
    static func seal(positionEvent plaintext: Data, channelKey: String, keys: ClusterKeys) throws -> String {
        try keys.seal(plaintext, for: .lastPosition, context: channelKey)
    }

    /// Opens a stored row.
    /// - Throws: ``ClusterSealError`` when the row was not sealed for this row key with a cluster secret, or its
    ///   content names a channel whose key is not the row's.
    static func open(channelKey: String, sealed: String, keys: ClusterKeys) throws -> LastPosition {
        let opened = try keys.open(sealed, for: .lastPosition, context: channelKey)
        let wire = try JSONDecoder().decode(Wire.self, from: opened)
        guard keys.channelKeys(wire.c).contains(channelKey) else { throw ClusterSealError() }
        return LastPosition(channel: wire.c, seq: wire.s, position: wire.p, donations: wire.t, viewSeqs: wire.v, seenAt: wire.ls)
    }
}
