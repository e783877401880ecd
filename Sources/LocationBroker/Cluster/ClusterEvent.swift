import BrokerProtocol
import Foundation

/// What one node tells the others through the cluster bus. Carried as a PostgreSQL NOTIFY payload, so it
/// must stay under 8,000 bytes; the keys are short because every node receives every event.
enum ClusterEvent: Sendable, Equatable {
    /// A position kept on `channel` under `seq`, with the donations trackable on the sending node when it was kept:
    /// a receiving node delivers it only to donors of those donations that are still trackable there.
    case position(origin: String, channel: String, seq: Int64, position: Position, donations: [String], seenAt: Int64)
    /// The volunteer's last connection to `origin` closed.
    case offline(origin: String, channel: String, lastSeen: Int64?)
    /// A donation change the store made durable (sent by the store, inside the change's transaction).
    case donation(origin: String, change: DonationChange)

    /// The largest payload PostgreSQL accepts in a NOTIFY, less a margin.
    static let maximumPayloadBytes = 7_900

    private struct Wire: Codable {
        var k: String
        var n: String
        var c: String?
        var s: Int64?
        var p: Position?
        var t: [String]?
        var ls: Int64?
        var r: Int64?
        var id: String?
        var d: Donation?
    }

    /// The event as a NOTIFY payload.
    func encoded() throws -> String {
        let wire: Wire
        switch self {
        case .position(let origin, let channel, let seq, let position, let donations, let seenAt):
            wire = Wire(k: "p", n: origin, c: channel, s: seq, p: position, t: donations, ls: seenAt)
        case .offline(let origin, let channel, let lastSeen):
            wire = Wire(k: "o", n: origin, c: channel, ls: lastSeen)
        case .donation(let origin, let change):
            wire = Wire(k: "d", n: origin, r: change.revision, id: change.id, d: change.new)
        }
        return String(decoding: try JSONEncoder().encode(wire), as: UTF8.self)
    }

    /// Decodes a NOTIFY payload; throws on anything this version does not understand.
    init(payload: String) throws {
        let wire = try JSONDecoder().decode(Wire.self, from: Data(payload.utf8))
        switch wire.k {
        case "p":
            guard let channel = wire.c, let seq = wire.s, let position = wire.p, let donations = wire.t, let seenAt = wire.ls else {
                throw ClusterEventError("a position event without channel, seq, position, donations or time")
            }
            self = .position(origin: wire.n, channel: channel, seq: seq, position: position, donations: donations, seenAt: seenAt)
        case "o":
            guard let channel = wire.c else { throw ClusterEventError("an offline event without channel") }
            self = .offline(origin: wire.n, channel: channel, lastSeen: wire.ls)
        case "d":
            guard let revision = wire.r, let id = wire.id else { throw ClusterEventError("a donation event without revision or id") }
            self = .donation(origin: wire.n, change: DonationChange(id: id, revision: revision, old: nil, new: wire.d))
        default:
            throw ClusterEventError("an event of unknown kind \(wire.k)")
        }
    }
}

struct ClusterEventError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
