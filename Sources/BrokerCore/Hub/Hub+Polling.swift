import BrokerProtocol

extension Hub {
    /// What a donor may read of a volunteer's channel after a seq, asked without a connection (a long poll).
    package struct PolledPositions: Sendable, Equatable {
        /// The positions kept for the caller's donation with a seq (in that donation's view) above the one asked
        /// for, oldest first.
        package var positions: [ServerFrame.KeptPosition]
        /// The seq of the newest position the caller may see on the channel, `nil` when there is none: the
        /// caller learns nothing of the positions kept for others, nor of whether the volunteer publishes.
        package var latestVisibleSeq: Int64?
        /// Whether one of the caller's donations on the channel is trackable now (`false` while its trip is paused).
        package var tracking: Bool
    }

    /// The positions on `channelName` after `seq` that `identity` may see, by the rule of a WebSocket `subscribe`
    /// by channel: only the donor of a donation of that volunteer that is trackable (or paused, which shows
    /// nothing), only the positions kept for that donation (a fix taken before its window was never kept for
    /// it; a pause or an end purged what was), numbered in its view. A donor with several donations on the channel
    /// reads the one a `subscribe` by channel picks. Read from the history that `since` reads, under the channel's
    /// lock.
    /// - Returns: the positions, or the refusal a WebSocket `subscribe` would give (the same whatever the reason
    ///   when the caller has no donation there; `not_trackable` for a donation that is neither trackable nor paused).
    package func positions(on channelName: String, after seq: Int64, for identity: String) -> Result<PolledPositions, BrokerError> {
        channels.locked(channelName, create: false) { channel -> Result<PolledPositions, BrokerError> in
            let mine = (channel?.donations.values.filter { $0.donor == identity } ?? []).sorted { $0.id < $1.id }
            guard let channel, let first = mine.first else { return .failure(Subscriptions.channelRefusal) }
            let picked = mine.first { $0.state.isTrackable } ?? first
            guard picked.state.isTrackable || mine.contains(where: { $0.state.isPaused }) else {
                return .failure(
                    BrokerError(
                        .notTrackable,
                        "your donation \(first.id) is \(first.state.rawValue); it can be watched while BEING-LOOKED-FOR or BEING-TAKEN-TO"))
            }
            var positions: [ServerFrame.KeptPosition] = []
            var latest: Int64?
            // A pause or an end purged the donation's views: a paused donation finds none.
            for entry in channel.history {
                guard let view = entry.view(for: picked.id) else { continue }
                latest = view.seq
                if view.seq > seq { positions.append(.init(seq: view.seq, position: entry.position)) }
            }
            return .success(PolledPositions(positions: positions, latestVisibleSeq: latest, tracking: picked.state.isTrackable))
        }
    }
}
