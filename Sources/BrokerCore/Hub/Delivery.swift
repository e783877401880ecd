import BrokerProtocol
import NIOCore

/// Makes frames and hands them to connections' sinks: each frame is encoded and framed once (``Framing``),
/// whatever the number of its receivers. Holds no state and takes no lock of its own; the parts of the hub
/// call it under the channel's shard lock when the frame concerns a channel.
package struct Delivery: Sendable {
    let framing: Framing
    let metrics: any HubMetrics

    /// Encodes and frames a non-position frame. Position frames go through ``position(channel:seq:position:)``.
    package func prepare(_ frame: ServerFrame) -> PreparedFrame {
        // Every connection gets a welcome as it opens: written directly, like positions (the connect storm).
        if case .welcome(let welcome) = frame { return WelcomeFrameEncoder.withEncoded(welcome) { framing.prepare($0) } }
        do {
            return framing.prepare(try WireJSON.encode(frame))
        } catch {
            // Every server frame is plain data; a failure here is a programming error worth a loud frame.
            return framing.prepare(Array(#"{"type":"error","code":"internal","message":"the broker could not encode a frame"}"#.utf8))
        }
    }

    /// Encodes and frames a position frame, with the fast encoder.
    /// - Parameter storage: a buffer the framing may write the frame into (taken: `nil` afterwards).
    func position(channel: String, seq: Int64, position: Position, reusing storage: inout ByteBuffer?) -> PreparedFrame {
        PositionFrameEncoder.withEncoded(channel: channel, seq: seq, position: position) { framing.prepare($0, reusing: &storage) }
    }

    /// Queues a frame for one connection.
    package func reply(_ frame: ServerFrame, to connection: ClientConnection) {
        metrics.queued(connection.sink.enqueue(prepare(frame), conflationKey: nil))
    }

    /// Queues an already prepared frame for one connection.
    func push(_ frame: PreparedFrame, conflationKey: String? = nil, to connection: ClientConnection) {
        metrics.queued(connection.sink.enqueue(frame, conflationKey: conflationKey))
    }

    /// Encodes `frame` once and queues it for the subscribers of `channel` that watch `donation`.
    func send(_ frame: ServerFrame, in channel: VolunteerChannel, toDonation donation: String) {
        guard let watchers = channel.subscribersByDonation[donation], !watchers.isEmpty else { return }
        let prepared = prepare(frame)
        for connection in watchers.values {
            metrics.queued(connection.sink.enqueue(prepared, conflationKey: nil))
        }
    }

    /// Tells the channel's subscribers whether the volunteer is online: only those whose donation is trackable. A
    /// paused donor learns nothing of when the volunteer works for somebody else.
    func notifyPresence(_ channel: VolunteerChannel) {
        guard !channel.subscribers.isEmpty else { return }
        var frame: PreparedFrame?
        for (donation, watchers) in channel.subscribersByDonation where channel.donations[donation]?.state.isTrackable == true {
            let prepared = frame ?? prepare(presence(of: channel))
            frame = prepared
            for connection in watchers.values {
                metrics.queued(connection.sink.enqueue(prepared, conflationKey: nil))
            }
        }
    }

    /// The channel's presence frame.
    func presence(of channel: VolunteerChannel) -> ServerFrame {
        .presence(.init(channel: channel.name, online: channel.online, lastSeen: channel.lastSeen))
    }

    /// Queues a kept position for the subscribers of the donations it was kept for (`trackable`), each with the
    /// frame of its donation's view, conflated by channel. The hot path: no lock but each sink's, and one metrics call
    /// for the whole fan-out.
    func fanOut(_ entry: KeptEntry, in channel: VolunteerChannel, to trackable: [String]) -> FanOutTally {
        var tally = FanOutTally()
        let conflationKey = channel.name
        if entry.others.isEmpty {
            // One number for every donation (the usual case): their watchers, cached from one publish to the next.
            let frame = entry.first.frame
            for connection in channel.watchers(of: trackable) {
                tally.count(connection.sink.enqueue(frame, conflationKey: conflationKey))
            }
        } else {
            for view in entry.views {
                for donation in view.donations {
                    guard let watchers = channel.subscribersByDonation[donation] else { continue }
                    for connection in watchers.values {
                        tally.count(connection.sink.enqueue(view.frame, conflationKey: conflationKey))
                    }
                }
            }
        }
        metrics.kept(tally)
        return tally
    }
}
