import NIOCore
import Synchronization

/// The connections of every channel, grouped by the event loop that serves them.
///
/// Channels are thread-safe, ChannelHandlerContexts are not: the registry holds `Channel`s, and a fan-out
/// writes straight to those on its own loop and hands the rest to their loop in one `execute` per loop, so a
/// frame costs at most one hop per other loop rather than one per connection. The lock is held only to copy a
/// snapshot (copy-on-write, so no element is copied); nothing is written under it.
final class Rooms: Sendable {
    /// The members of one room: for each event loop, its connections.
    typealias Members = [ObjectIdentifier: [any Channel]]

    private let rooms = Mutex<[String: Members]>([:])

    /// Adds `channel` to `room`.
    func join(_ room: String, _ channel: any Channel) {
        let loop = ObjectIdentifier(channel.eventLoop)
        rooms.withLock { $0[room, default: [:]][loop, default: []].append(channel) }
    }

    /// Removes `channel` from `room`, dropping the room when it empties.
    func leave(_ room: String, _ channel: any Channel) {
        let loop = ObjectIdentifier(channel.eventLoop)
        rooms.withLock { rooms in
            guard var members = rooms[room], var onLoop = members[loop] else { return }
            onLoop.removeAll { $0 === channel }
            members[loop] = onLoop.isEmpty ? nil : onLoop
            rooms[room] = members.isEmpty ? nil : members
        }
    }

    /// The members of `room` now.
    func members(of room: String) -> Members {
        rooms.withLock { $0[room] ?? [:] }
    }
}
