import BrokerCore
import BrokerProtocol
import Foundation

/// The newest position of each channel in a batch of events, as columns for one `unnest` upsert (a channel may
/// appear once per statement in an upsert). The donation ids go along as a statement parameter, for the check that
/// one of them is still trackable, and are not stored in clear.
struct LastPositionRows {
    var channelKeys: [String] = []
    var seqs: [Int64] = []
    var sealed: [String] = []
    var donations: [String] = []
    var channels: [String] = []

    /// A kept position of the batch, with its event's plaintext (``ClusterEvent/plaintext()``), sealed as its row
    /// as it is.
    struct Position {
        let channel: String
        let seq: Int64
        let donations: [String]
        let plaintext: Data
    }

    /// - Parameter positions: the batch's positions in order; the last of each channel is its row.
    init(_ positions: [Position], routes: inout ChannelRoutes) {
        var newest: [String: Int] = [:]
        var rows: [Position] = []
        for position in positions {
            if let index = newest[position.channel] {
                rows[index] = position
            } else {
                newest[position.channel] = rows.count
                rows.append(position)
            }
        }
        for row in rows {
            let channelKey = routes.route(of: row.channel).channelKey
            guard let value = try? SealedLastPosition.seal(positionEvent: row.plaintext, channelKey: channelKey, keys: routes.keys) else { continue }
            channelKeys.append(channelKey)
            seqs.append(row.seq)
            sealed.append(value)
            donations.append(row.donations.joined(separator: ","))
            channels.append(row.channel)
        }
    }
}
