import BrokerProtocol
import NIOCore

extension Hub {
    /// A position another node kept: this node keeps it under the same seq and delivers it to its own donors,
    /// but only for the donations that were trackable on the sender AND are still trackable here. A change made
    /// on another node is applied here in commit order, so a position published after it reaches no one here
    /// it would not reach on the sender.
    ///
    /// A position kept longer ago than ``SealedLastPosition/retentionSeconds`` is not taken in: a sealed event
    /// replayed from the bus long after is as stale as a stored last position that old.
    func receiveRemotePosition(channel name: String, seq: Int64, position: Position, donations: [String], seenAt: Int64) {
        guard clock() - seenAt <= Int64(SealedLastPosition.retentionSeconds) * 1000 else { return }
        locked(name, create: false) { channel in
            // No gate for this volunteer here means no trackable donation either: nothing to keep.
            guard let channel else { return }
            channel.lastSeen = max(channel.lastSeen ?? seenAt, seenAt)
            if !channel.online {
                channel.online = true
                notifyPresence(channel)
            }
            if let last = channel.history.last, seq <= last.seq { return }
            // Judged again here by when the fix was taken, against this node's own windows.
            let tooOld = clock() - position.timestamp > settings.maxPositionAgeMilliseconds
            let allowed = tooOld ? [] : donations.filter {
                channel.admits($0, takenAt: position.timestamp, tolerance: settings.windowToleranceMilliseconds)
            }
            guard !allowed.isEmpty else {
                channel.nextSeq = max(channel.nextSeq, seq + 1)
                return
            }
            _ = keep(position, seq: seq, in: channel, for: allowed)
        }
    }

    /// The volunteer's last connection to another node closed. A volunteer still connected here stays online.
    func receiveRemoteOffline(channel name: String, lastSeen: Int64?) {
        locked(name, create: false) { channel in
            guard let channel, channel.online, channel.connections == 0 else { return }
            if let lastSeen { channel.lastSeen = max(channel.lastSeen ?? lastSeen, lastSeen) }
            channel.online = false
            notifyPresence(channel)
        }
    }

    /// Takes in the stored last positions of a bus shard this node has just started to listen to: each is kept
    /// (and handed to the channel's current subscribers) when it is newer than what this node holds, for the
    /// donations still trackable here whose window it falls in, whatever its age (it is the channel's `last`).
    /// The volunteer counts as online if it was seen within the presence timeout.
    func takeInStored(_ lastPositions: [LastPosition]) {
        let now = clock()
        for last in lastPositions {
            locked(last.channel, create: false) { channel in
                guard let channel else { return }
                if let history = channel.history.last, last.seq <= history.seq { return }
                channel.lastSeen = max(channel.lastSeen ?? last.seenAt, last.seenAt)
                if !channel.online && now - last.seenAt <= settings.presenceTimeoutMilliseconds {
                    channel.online = true
                    notifyPresence(channel)
                }
                let allowed = last.donations.filter {
                    channel.admits($0, takenAt: last.position.timestamp, tolerance: settings.windowToleranceMilliseconds)
                }
                guard !allowed.isEmpty else {
                    channel.nextSeq = max(channel.nextSeq, last.seq + 1)
                    return
                }
                _ = keep(last.position, seq: last.seq, in: channel, for: allowed)
            }
        }
    }

    /// Answers subscriptions that waited for their bus shards: each is checked again now (the donation may have
    /// changed meanwhile) and answered as any subscription is, or refused. One whose connection closed meanwhile
    /// is dropped.
    func completePending(_ pending: [ShardInterest.Pending]) {
        for waiting in pending {
            let connection = waiting.connection
            guard isConnected(connection.id) else { continue }
            if let refusal = subscribe(connection, waiting.request) {
                metrics.reject(refusal.code)
                reply(.error(.init(re: waiting.request.id, refusal)), to: connection)
            }
            // A connection that closed while it was answered: undo what its disconnect could not see.
            if !isConnected(connection.id) {
                for name in connection.subscribedChannels {
                    locked(name, create: false) { channel in _ = channel?.removeSubscriber(connection.id) }
                }
            }
        }
    }

    /// Ends a subscription that still waits for its bus shard, for a client that unsubscribed before its answer:
    /// replies `unsubscribed` after no `subscribed`.
    /// - Returns: whether one waited.
    func withdrawWaiting(_ connection: ClientConnection, channel: String?, donation: String?, re: String?) -> Bool {
        guard let withdrawn = cluster?.interest?.withdraw(connection: connection.id, channel: channel, donation: donation) else { return false }
        reply(.unsubscribed(.init(re: re, channel: withdrawn.channel, donation: withdrawn.donation, reason: .client)), to: connection)
        return true
    }

    /// The channels that have a subscriber on this node, for the bus to know which shards it still needs.
    func subscribedChannelNames() -> [String] {
        channelNames(.subscribed)
    }

    /// Takes in the channels' last positions the cluster stored, at start, after the donations are loaded: a
    /// node started after a position was kept still has it for `last` and `since`, and the volunteer's presence.
    func seed(_ lastPositions: [LastPosition]) {
        let now = clock()
        for last in lastPositions {
            locked(last.channel, create: false) { channel in
                guard let channel, channel.history.isEmpty else { return }
                channel.lastSeen = last.seenAt
                channel.online = now - last.seenAt <= settings.presenceTimeoutMilliseconds
                let allowed = last.donations.filter { channel.donations[$0]?.state.isTrackable == true }
                channel.nextSeq = max(channel.nextSeq, last.seq + 1)
                guard !allowed.isEmpty else { return }
                let frame = TextFrame.framed(PositionFrameEncoder.encode(channel: channel.name, seq: last.seq, position: last.position))
                channel.history.append(KeptEntry(seq: last.seq, position: last.position, frame: frame, donations: allowed))
            }
        }
    }
}
