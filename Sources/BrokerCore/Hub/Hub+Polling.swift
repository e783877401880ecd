import BrokerProtocol

extension Hub {
    /// What a donor may read of a volunteer's channel after a seq, asked without a connection (a long poll).
    package struct PolledPositions: Sendable, Equatable {
        /// The positions kept for the caller's trackable donations with a seq above the one asked for, oldest first.
        package var positions: [ServerFrame.KeptPosition]
        /// The seq of the newest position the caller may see on the channel, `nil` when there is none: the
        /// caller learns nothing of the positions kept for others, nor of whether the volunteer publishes.
        package var latestVisibleSeq: Int64?
        /// Whether one of the caller's donations on the channel is trackable now (`false` while its trip is paused).
        package var tracking: Bool
    }

    /// The positions on `channelName` after `seq` that `identity` may see, by the rule of a WebSocket `subscribe`
    /// by channel: only the donor of a donation of that volunteer that is trackable (or paused, which shows
    /// nothing), only the positions kept for such a donation (a fix taken before its window was never kept for
    /// it; a pause or an end purged what was). Read from the history that `since` reads, under the channel's lock.
    /// - Returns: the positions, or the refusal a WebSocket `subscribe` would give (the same whatever the reason
    ///   when the caller has no donation there; `not_trackable` for a donation that is neither trackable nor paused).
    package func positions(on channelName: String, after seq: Int64, for identity: String) -> Result<PolledPositions, BrokerError> {
        channels.locked(channelName, create: false) { channel -> Result<PolledPositions, BrokerError> in
            let mine = (channel?.donations.values.filter { $0.donor == identity } ?? []).sorted { $0.id < $1.id }
            guard let channel, let first = mine.first else { return .failure(Subscriptions.channelRefusal) }
            let trackable = Set(mine.filter { $0.state.isTrackable }.map(\.id))
            guard !trackable.isEmpty || mine.contains(where: { $0.state.isPaused }) else {
                return .failure(
                    BrokerError(
                        .notTrackable,
                        "your donation \(first.id) is \(first.state.rawValue); it can be watched while BEING-LOOKED-FOR or BEING-TAKEN-TO"))
            }
            var positions: [ServerFrame.KeptPosition] = []
            var latest: Int64?
            for entry in channel.history where entry.donations.contains(where: trackable.contains) {
                latest = entry.seq
                if entry.seq > seq { positions.append(.init(seq: entry.seq, position: entry.position)) }
            }
            return .success(PolledPositions(positions: positions, latestVisibleSeq: latest, tracking: !trackable.isEmpty))
        }
    }
}
