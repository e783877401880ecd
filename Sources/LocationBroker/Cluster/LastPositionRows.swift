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

    /// - Parameter positions: the batch's position events in order, each with its plaintext (``ClusterEvent/plaintext()``),
    ///   sealed as its row as it is.
    init(_ positions: [(event: ClusterEvent, plaintext: Data)], routes: inout ChannelRoutes) {
        var newest: [String: Int] = [:]
        var rows: [(channel: String, seq: Int64, donations: [String], plaintext: Data)] = []
        for (event, plaintext) in positions {
            guard case .position(_, let channel, let seq, _, let donations, _) = event else { continue }
            let row = (channel: channel, seq: seq, donations: donations, plaintext: plaintext)
            if let index = newest[channel] {
                rows[index] = row
            } else {
                newest[channel] = rows.count
                rows.append(row)
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
