/// A connection's subscriptions: each subscribed channel with the donation that allowed it.
///
/// A donor's connection watches one channel almost always, so the first subscription is kept inline and a
/// dictionary is made only for more: an idle connection then holds no dictionary storage (a one-entry
/// `[String: String]` costs about 140 bytes). A value; ``ClientConnection`` keeps it behind its lock.
package struct ConnectionSubscriptions: Sendable {
    /// One subscription, kept inline.
    private var first: (channel: String, donation: String)?
    /// The others, by channel.
    private var others: [String: String] = [:]

    package init() {}

    /// How many channels are subscribed.
    package var count: Int { (first == nil ? 0 : 1) + others.count }

    /// The donation `channel` is watched for, if subscribed.
    package func donation(for channel: String) -> String? {
        if let first, first.channel == channel { return first.donation }
        return others[channel]
    }

    /// Every subscribed channel.
    package var channels: [String] {
        var channels: [String] = []
        channels.reserveCapacity(count)
        if let first { channels.append(first.channel) }
        channels.append(contentsOf: others.keys)
        return channels
    }

    /// Records that `channel` is watched for `donation`, replacing the donation it was watched for.
    package mutating func set(channel: String, donation: String) {
        if first == nil || first?.channel == channel {
            first = (channel, donation)
        } else {
            others[channel] = donation
        }
    }

    /// Forgets `channel`.
    /// - Returns: the donation it was watched for, if subscribed.
    @discardableResult
    package mutating func remove(channel: String) -> String? {
        if let first, first.channel == channel {
            // Another subscription takes the inline place, so that one left over needs no dictionary.
            if let next = others.first {
                others.removeValue(forKey: next.key)
                self.first = (next.key, next.value)
            } else {
                self.first = nil
            }
            return first.donation
        }
        return others.removeValue(forKey: channel)
    }
}
