import BrokerProtocol
import Foundation
import XCTest

/// Every frame encodes to the documented JSON and decodes back to the same value.
final class FrameGoldenTests: XCTestCase {
    private let position = Position(lat: -34.6037, lon: -58.3816, accuracy: 8.5, speed: 7.2, heading: 270, timestamp: 1_763_757_670_000)
    private let positionJSON = #"{"accuracy":8.5,"heading":270,"lat":-34.6037,"lon":-58.3816,"speed":7.2,"timestamp":1763757670000}"#
    private let home = Home(lat: -34.6, lon: -58.4, label: "Av. Corrientes 1234")
    private let institution = Institution(lat: -34.61, lon: -58.41, name: "Caritas")

    private func text(_ value: some Encodable) throws -> String {
        String(decoding: try WireJSON.encode(value), as: UTF8.self)
    }

    private func assertServerFrame(_ frame: ServerFrame, encodesTo golden: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try text(frame), golden, file: file, line: line)
        XCTAssertEqual(try WireJSON.decodeServerFrame(Array(golden.utf8)), frame, file: file, line: line)
    }

    func testWelcome() throws {
        try assertServerFrame(.welcome(.init(identity: "donor@example.org", heartbeat: 30)),
                              encodesTo: #"{"heartbeat":30,"identity":"donor@example.org","type":"welcome"}"#)
    }

    func testAckOfAKeptAndOfAnUntrackedPosition() throws {
        try assertServerFrame(.ack(.init(re: "p1", seq: 42, tracking: true, watchers: 1)),
                              encodesTo: #"{"re":"p1","seq":42,"tracking":true,"type":"ack","watchers":1}"#)
        try assertServerFrame(.ack(.init(re: "p2", seq: nil, tracking: false, watchers: 0)),
                              encodesTo: #"{"re":"p2","tracking":false,"type":"ack","watchers":0}"#)
        try assertServerFrame(.ack(.init(re: "p3", seq: nil, tracking: false, watchers: 0, reason: .beforeWindow)),
                              encodesTo: #"{"re":"p3","reason":"before-window","tracking":false,"type":"ack","watchers":0}"#)
    }

    func testSubscribedBeforeTheFirstFixHasExplicitNulls() throws {
        let frame = ServerFrame.subscribed(.init(
            re: "s1", channel: "vol@example.org", donation: "d-123", state: .beingLookedFor, tracking: true, destination: .home,
            home: home, institution: institution, last: nil, online: false))
        try assertServerFrame(frame, encodesTo: #"{"channel":"vol@example.org","destination":"home","donation":"d-123","home":{"label":"Av. Corrientes 1234","lat":-34.6,"lon":-58.4},"institution":{"lat":-34.61,"lon":-58.41,"name":"Caritas"},"last":null,"online":false,"re":"s1","state":"BEING-LOOKED-FOR","tracking":true,"type":"subscribed"}"#)
    }

    func testSubscribedWithALastPosition() throws {
        let frame = ServerFrame.subscribed(.init(
            re: nil, channel: "vol@example.org", donation: "d-123", state: .beingTakenTo, tracking: true, destination: .institution,
            home: home, institution: institution, last: .init(seq: 41, position: position), online: true))
        try assertServerFrame(frame, encodesTo: #"{"channel":"vol@example.org","destination":"institution","donation":"d-123","home":{"label":"Av. Corrientes 1234","lat":-34.6,"lon":-58.4},"institution":{"lat":-34.61,"lon":-58.41,"name":"Caritas"},"last":{"position":\#(positionJSON),"seq":41},"online":true,"state":"BEING-TAKEN-TO","tracking":true,"type":"subscribed"}"#)
    }

    func testUnsubscribed() throws {
        try assertServerFrame(.unsubscribed(.init(re: "u1", channel: "vol@example.org", donation: nil, reason: .client)),
                              encodesTo: #"{"channel":"vol@example.org","re":"u1","reason":"client","type":"unsubscribed"}"#)
        try assertServerFrame(.unsubscribed(.init(re: nil, channel: "vol@example.org", donation: "d-123", reason: .delivered)),
                              encodesTo: #"{"channel":"vol@example.org","donation":"d-123","reason":"DELIVERED","type":"unsubscribed"}"#)
    }

    func testPosition() throws {
        try assertServerFrame(.position(.init(channel: "vol@example.org", seq: 42, position: position)),
                              encodesTo: #"{"channel":"vol@example.org","position":\#(positionJSON),"seq":42,"type":"position"}"#)
    }

    func testStatePausedAndResumed() throws {
        try assertServerFrame(.state(.init(channel: "vol@example.org", donation: "d-123", state: .pickedByVolunteer)),
                              encodesTo: #"{"channel":"vol@example.org","destination":null,"donation":"d-123","state":"PICKED-BY-VOLUNTEER","tracking":false,"type":"state"}"#)
        try assertServerFrame(.state(.init(channel: "vol@example.org", donation: "d-123", state: .beingTakenTo)),
                              encodesTo: #"{"channel":"vol@example.org","destination":"institution","donation":"d-123","state":"BEING-TAKEN-TO","tracking":true,"type":"state"}"#)
    }

    func testArrival() throws {
        try assertServerFrame(.arrival(.init(channel: "vol@example.org", donation: "d-123", place: .home, distance: 85.2)),
                              encodesTo: #"{"channel":"vol@example.org","distance":85.2,"donation":"d-123","place":"home","type":"arrival"}"#)
    }

    func testPresence() throws {
        try assertServerFrame(.presence(.init(channel: "vol@example.org", online: false, lastSeen: 1_763_757_670_000)),
                              encodesTo: #"{"channel":"vol@example.org","lastSeen":1763757670000,"online":false,"type":"presence"}"#)
    }

    func testError() throws {
        try assertServerFrame(.error(.init(re: "s1", code: .forbidden, message: "no")),
                              encodesTo: #"{"code":"forbidden","message":"no","re":"s1","type":"error"}"#)
    }

    func testClientFramesEncodeAsDocumentedAndDecodeBack() throws {
        let decoder = ClientFrameDecoder()
        let cases: [(ClientFrame, String)] = [
            (.publish(.init(id: "p1", position: position)), #"{"id":"p1","position":\#(positionJSON),"type":"publish"}"#),
            (.subscribe(.init(id: "s1", target: .channel("vol@example.org"), since: 41)), #"{"channel":"vol@example.org","id":"s1","since":41,"type":"subscribe"}"#),
            (.subscribe(.init(id: "s2", target: .donation("d-123"))), #"{"donation":"d-123","id":"s2","type":"subscribe"}"#),
            (.unsubscribe(.init(id: "u1", target: .channel("vol@example.org"))), #"{"channel":"vol@example.org","id":"u1","type":"unsubscribe"}"#),
        ]
        for (frame, golden) in cases {
            XCTAssertEqual(try text(frame), golden)
            XCTAssertEqual(try decoder.decode(Array(golden.utf8)).get(), frame)
        }
    }

    /// The publish path writes position frames by hand; they must be exactly what JSONEncoder writes.
    func testHandWrittenPositionFramesMatchJSONEncoder() throws {
        let positions = [
            position,
            Position(lat: 0, lon: 0, timestamp: 1),
            Position(lat: 90, lon: -180, accuracy: 0, speed: 0.0001, heading: 359.99999, timestamp: 1_763_757_670_123),
            Position(lat: -89.123456789012, lon: 179.999999999, accuracy: 1e-7, speed: 123456.789, heading: 0.5, timestamp: 9_999_999_999_999),
        ]
        for (index, position) in positions.enumerated() {
            let channel = index == 3 ? #"odd"name\slash/@x.org"# : "vol@example.org"
            let manual = PositionFrameEncoder.encode(channel: channel, seq: Int64(index) + 1_763_757_670_000_000, position: position)
            let reference = try WireJSON.encode(ServerFrame.position(.init(channel: channel, seq: Int64(index) + 1_763_757_670_000_000, position: position)))
            XCTAssertEqual(String(decoding: manual, as: UTF8.self), String(decoding: reference, as: UTF8.self))
        }
    }
}
