import BrokerProtocol
import DeterministicRandom
import Foundation
import XCTest

@testable import BrokerPostgres

/// A receiving node reads the position events other nodes send by hand, and reads each exactly as `JSONDecoder`
/// does; every other event, and every shape it does not know, goes to `JSONDecoder`.
final class PositionEventReaderTests: XCTestCase {
    private func fast(_ plaintext: Data) -> ClusterEvent? {
        plaintext.withUnsafeBytes { PositionEventReader.read($0.bindMemory(to: UInt8.self)) }
    }

    private func fast(_ text: String) -> ClusterEvent? { fast(Data(text.utf8)) }

    private func strict(_ text: String) throws -> ClusterEvent {
        try ClusterEvent(strictly: Data(text.utf8), isHeartbeat: false)
    }

    func testEveryPositionEventASenderWritesReadsAsJSONDecoderReadsIt() throws {
        var random = SeededRandom(seed: 0x5eed_c1a5)
        var readByHand = 0
        for round in 0..<3_000 {
            let position = Position(
                lat: random.uniform(-90...90), lon: random.uniform(-180...180),
                accuracy: random.chance(0.7) ? random.uniform(0...500) : nil,
                speed: random.chance(0.5) ? Double(Int(random.uniform(0...40) * 100)) / 100 : nil,
                heading: random.chance(0.5) ? random.uniform(0...359.99) : nil,
                timestamp: Int64(random.uniform(0...2e12)))
            let donations = (0..<Int(random.uniform(0...4))).map { "d-\(round)-\($0)" }
            // Seqs start from the clock, in microseconds (16 digits); any up to 18 digits is read by hand.
            func seq() -> Int64 {
                random.chance(0.7)
                    ? Int64.random(in: 1_700_000_000_000_000...1_900_000_000_000_000, using: &random)
                    : Int64.random(in: -5...999_999_999_999_999_999, using: &random)
            }
            // Some senders number each donation's view, older ones do not.
            let viewSeqs = random.chance(0.8) ? donations.map { _ in seq() } : nil
            let event = ClusterEvent.position(
                origin: "node-\(round % 7)", channel: "volunteer\(round)@example.org", seq: seq(),
                position: position, donations: donations, viewSeqs: viewSeqs, seenAt: Int64(random.uniform(0...2e12)))
            let plaintext = try event.plaintext()
            let strictly = try ClusterEvent(strictly: plaintext, isHeartbeat: false)
            XCTAssertEqual(strictly, event)
            if let read = fast(plaintext) {
                readByHand += 1
                XCTAssertEqual(read, strictly, String(decoding: plaintext, as: UTF8.self))
            } else {
                // A number with an exponent (a coordinate within 0.0001 of zero) is JSONDecoder's to read.
                let text = String(decoding: plaintext, as: UTF8.self)
                XCTAssertTrue(text.contains(/[0-9]e[-+]?[0-9]/), "declined without an exponent: \(text)")
            }
        }
        // Nearly every event is read by hand: the reader is in use.
        XCTAssertGreaterThan(readByHand, 2_990)
    }

    func testMembersInAnyOrderAndWhitespaceReadTheSame() throws {
        let text = #" { "ls" : 5 , "t" : [ "a" , "b" ] , "v" : [ 1 , 2 ] , "p" : { "timestamp" : 7 , "lon" : 2.5 , "lat" : -1 } , "s" : 3 , "c" : "v@x" , "n" : "node" , "k" : "p" } "#
        let read = try XCTUnwrap(fast(text))
        XCTAssertEqual(read, try strict(text))
        XCTAssertEqual(read, .position(
            origin: "node", channel: "v@x", seq: 3, position: Position(lat: -1, lon: 2.5, timestamp: 7), donations: ["a", "b"], viewSeqs: [1, 2], seenAt: 5))
        let empty = #"{"k":"p","n":"node","c":"v@x","s":1,"p":{"lat":1,"lon":2,"timestamp":3},"t":[],"ls":4}"#
        XCTAssertEqual(fast(empty), try strict(empty))
    }

    func testWhatTheReaderDeclinesJSONDecoderStillDecidesAsBefore() throws {
        let base = #"{"k":"p","n":"node","c":"v@x","s":1,"p":{"lat":1,"lon":2,"timestamp":3},"t":["d"],"v":[9],"ls":4}"#
        let declined: [(String, String)] = [
            ("an escape in a string", base.replacingOccurrences(of: #""v@x""#, with: #""v\u0040x""#)),
            ("non-ASCII", base.replacingOccurrences(of: #""d""#, with: #""dé""#)),
            ("a null", base.replacingOccurrences(of: #""v":[9]"#, with: #""v":null"#)),
            ("an unknown member", base.replacingOccurrences(of: #""ls":4"#, with: #""ls":4,"r":1"#)),
            ("a repeated member", base.replacingOccurrences(of: #""s":1"#, with: #""s":1,"s":2"#)),
            ("an exponent", base.replacingOccurrences(of: #""lat":1"#, with: #""lat":1e0"#)),
            ("a fraction where an integer goes", base.replacingOccurrences(of: #""s":1"#, with: #""s":1.0"#)),
            ("a 19-digit integer", base.replacingOccurrences(of: #""ls":4"#, with: #""ls":9223372036854775807"#)),
            ("another kind", #"{"k":"o","n":"node","c":"v@x","ls":4}"#),
            ("a missing member", base.replacingOccurrences(of: #","t":["d"]"#, with: "")),
            ("bytes after the object", base + "x"),
        ]
        for (what, text) in declined {
            XCTAssertNil(fast(text), what)
        }
        // The same shapes JSONDecoder reads as it always did: the escape, non-ASCII and the large number...
        XCTAssertEqual(try strict(declined[0].1), try strict(base))
        guard case .position(_, _, _, _, let donations, _, _) = try strict(declined[1].1) else { return XCTFail("a position") }
        XCTAssertEqual(donations, ["dé"])
        guard case .position(_, _, _, _, _, let viewSeqs, _) = try strict(declined[2].1) else { return XCTFail("a position") }
        XCTAssertNil(viewSeqs)
        guard case .position(_, _, _, _, _, _, let seenAt) = try strict(declined[7].1) else { return XCTFail("a position") }
        XCTAssertEqual(seenAt, Int64.max)
        // ...and refuses what it always refused.
        XCTAssertThrowsError(try strict(declined[9].1), "a position event without donations")
        XCTAssertThrowsError(try strict(declined[10].1), "trailing bytes")
    }

    func testAPositionSealedAsAHeartbeatIsRefusedWhoeverReadsIt() throws {
        let keys = ClusterKeys(secrets: ["0123456789-0123456789-0123456789-ab"])
        let position = ClusterEvent.position(
            origin: "a", channel: "v@x", seq: 1, position: Position(lat: 1, lon: 2, timestamp: 3), donations: ["d"], viewSeqs: [1], seenAt: 4)
        let plaintext = try position.plaintext()
        XCTAssertNotNil(fast(plaintext), "the reader would read it")
        XCTAssertThrowsError(try ClusterEvent(plaintext: plaintext, isHeartbeat: true), "but not from a payload sealed as a heartbeat")
        // And through the seal: a position under the heartbeat key does not open as a bus event.
        let underHeartbeatKey = try keys.seal(plaintext, for: .heartbeat, context: "lb_events")
        XCTAssertThrowsError(try ClusterEvent(sealed: underHeartbeatKey, keys: keys, channel: "lb_events"))
    }
}
