import BrokerProtocol
import Foundation

/// What one node tells the others through the cluster bus. Carried sealed (``ClusterKeys``) as a PostgreSQL NOTIFY
/// payload, so it must stay under 8,000 bytes: a donation change travels as its id and revision only, and every
/// node reads the row itself.
enum ClusterEvent: Sendable, Equatable {
    /// A position kept on `channel` under `seq`, with the donations trackable on the sending node when it was kept
    /// and its seq in each of their views (`viewSeqs`, in the same order; `nil` from a sender that gave none): a
    /// receiving node delivers it only to donors of those donations that are still trackable there.
    case position(origin: String, channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64]?, seenAt: Int64)
    /// The volunteer's last connection to `origin` closed.
    case offline(origin: String, channel: String, lastSeen: Int64?)
    /// Donation `id` changed at store revision `revision` (sent by the store, inside the change's transaction);
    /// receivers read the row.
    case donation(origin: String, id: String, revision: Int64)
    /// A node's round trip through its own listening session.
    case heartbeat(origin: String, nonce: UInt64)

    /// The largest payload PostgreSQL accepts in a NOTIFY, less a margin.
    static let maximumPayloadBytes = 7_900

    private struct Wire: Codable {
        var k: String
        var n: String
        var c: String?
        var s: Int64?
        var p: Position?
        var t: [String]?
        var v: [Int64]?
        var ls: Int64?
        var r: Int64?
        var id: String?
        var h: UInt64?
    }

    /// Heartbeats have a key of their own, so a captured bus event never opens as one, nor the other way round.
    private var purpose: ClusterKeys.Purpose {
        if case .heartbeat = self { return .heartbeat }
        return .busEvent
    }

    /// The event sealed for the NOTIFY channel `channel`.
    func sealed(with keys: ClusterKeys, channel: String) throws -> String {
        try sealed(try plaintext(), with: keys, channel: channel)
    }

    /// `plaintext`, this event's own (``plaintext()``), sealed for the NOTIFY channel `channel`: the writer encodes a
    /// position once for every channel it goes on and for its stored row (``SealedLastPosition``).
    func sealed(_ plaintext: Data, with keys: ClusterKeys, channel: String) throws -> String {
        try keys.seal(plaintext, for: purpose, context: channel)
    }

    /// What is sealed: the event as JSON.
    func plaintext() throws -> Data {
        let wire: Wire
        switch self {
        case .position(let origin, let channel, let seq, let position, let donations, let viewSeqs, let seenAt):
            return Self.positionPlaintext(
                origin: origin, channel: channel, seq: seq, position: position, donations: donations, viewSeqs: viewSeqs, seenAt: seenAt)
        case .offline(let origin, let channel, let lastSeen):
            wire = Wire(k: "o", n: origin, c: channel, ls: lastSeen)
        case .donation(let origin, let id, let revision):
            wire = Wire(k: "d", n: origin, r: revision, id: id)
        case .heartbeat(let origin, let nonce):
            wire = Wire(k: "h", n: origin, h: nonce)
        }
        return try JSONEncoder().encode(wire)
    }

    /// A position event as JSON, written directly (as the position frames are, ``PositionFrameEncoder``) rather than
    /// through `JSONEncoder`, which cost the writer more than sealing: the same members ``Wire`` decodes, so
    /// receivers and stored rows read it as before.
    private static func positionPlaintext(
        origin: String, channel: String, seq: Int64, position: Position, donations: [String], viewSeqs: [Int64]?, seenAt: Int64
    ) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(256 + channel.utf8.count + donations.reduce(0) { $0 + $1.utf8.count + 3 })
        out.append(contentsOf: #"{"k":"p","n":"#.utf8)
        PositionFrameEncoder.appendString(&out, origin)
        out.append(contentsOf: #","c":"#.utf8)
        PositionFrameEncoder.appendString(&out, channel)
        out.append(contentsOf: #","s":"#.utf8)
        PositionFrameEncoder.appendInteger(&out, seq)
        out.append(contentsOf: #","p":"#.utf8)
        PositionFrameEncoder.appendPosition(&out, position)
        out.append(contentsOf: #","t":["#.utf8)
        for (index, donation) in donations.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            PositionFrameEncoder.appendString(&out, donation)
        }
        if let viewSeqs {
            out.append(contentsOf: #"],"v":["#.utf8)
            for (index, viewSeq) in viewSeqs.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                PositionFrameEncoder.appendInteger(&out, viewSeq)
            }
        }
        out.append(contentsOf: #"],"ls":"#.utf8)
        PositionFrameEncoder.appendInteger(&out, seenAt)
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// Opens and decodes a NOTIFY payload received on `channel`.
    /// - Throws: ``ClusterSealError`` for a payload not sealed by a holder of the cluster secret for this channel;
    ///   ``ClusterEventError`` for a sealed payload this version does not understand.
    init(sealed payload: String, keys: ClusterKeys, channel: String) throws {
        let opened: Data
        let isHeartbeat: Bool
        if let event = try? keys.open(payload, for: .busEvent, context: channel) {
            (opened, isHeartbeat) = (event, false)
        } else {
            (opened, isHeartbeat) = (try keys.open(payload, for: .heartbeat, context: channel), true)
        }
        try self.init(plaintext: opened, isHeartbeat: isHeartbeat)
    }

    /// Reads an opened payload: a position event by hand (``PositionEventReader``), anything it declines with
    /// `JSONDecoder` (``init(strictly:isHeartbeat:)``).
    init(plaintext: Data, isHeartbeat: Bool) throws {
        if !isHeartbeat, let position = plaintext.withUnsafeBytes({ PositionEventReader.read($0.bindMemory(to: UInt8.self)) }) {
            self = position
            return
        }
        try self.init(strictly: plaintext, isHeartbeat: isHeartbeat)
    }

    /// Reads an opened payload with `JSONDecoder`, whatever its kind and shape.
    init(strictly plaintext: Data, isHeartbeat: Bool) throws {
        let wire = try JSONDecoder().decode(Wire.self, from: plaintext)
        guard (wire.k == "h") == isHeartbeat else { throw ClusterEventError("an event of kind \(wire.k) sealed for another purpose") }
        switch wire.k {
        case "p":
            guard let channel = wire.c, let seq = wire.s, let position = wire.p, let donations = wire.t, let seenAt = wire.ls else {
                throw ClusterEventError("a position event without channel, seq, position, donations or time")
            }
            self = .position(origin: wire.n, channel: channel, seq: seq, position: position, donations: donations, viewSeqs: wire.v, seenAt: seenAt)
        case "o":
            guard let channel = wire.c else { throw ClusterEventError("an offline event without channel") }
            self = .offline(origin: wire.n, channel: channel, lastSeen: wire.ls)
        case "d":
            guard let revision = wire.r, let id = wire.id else { throw ClusterEventError("a donation event without revision or id") }
            self = .donation(origin: wire.n, id: id, revision: revision)
        case "h":
            guard let nonce = wire.h else { throw ClusterEventError("a heartbeat without nonce") }
            self = .heartbeat(origin: wire.n, nonce: nonce)
        default:
            throw ClusterEventError("an event of unknown kind \(wire.k)")
        }
    }
}

struct ClusterEventError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
