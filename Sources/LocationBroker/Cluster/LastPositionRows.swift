import BrokerCore
import BrokerProtocol

/// The newest position of each channel in a batch of events, as columns for one `unnest` upsert (a channel may
/// appear once per statement in an upsert). The donation ids go along as a statement parameter, for the check that
/// one of them is still trackable, and are not stored in clear.
struct LastPositionRows {
    var channelKeys: [String] = []
    var seqs: [Int64] = []
    var sealed: [String] = []
    var donations: [String] = []
    var channels: [String] = []

    init(_ batch: [ClusterEvent], keys: ClusterKeys) {
        var newest: [String: Int] = [:]
        var rows: [LastPosition] = []
        for case .position(_, let channel, let seq, let position, let donations, let seenAt) in batch {
            let row = LastPosition(channel: channel, seq: seq, position: position, donations: donations, seenAt: seenAt)
            if let index = newest[channel] {
                rows[index] = row
            } else {
                newest[channel] = rows.count
                rows.append(row)
            }
        }
        for row in rows {
            guard let (channelKey, value) = try? SealedLastPosition.seal(row, keys: keys) else { continue }
            channelKeys.append(channelKey)
            seqs.append(row.seq)
            sealed.append(value)
            donations.append(row.donations.joined(separator: ","))
            channels.append(row.channel)
        }
    }
}
