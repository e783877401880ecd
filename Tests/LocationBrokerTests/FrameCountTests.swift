import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// `broker_frames_in_total` counts each client frame once, under its own `type` label, whatever the frame's fate
/// (a refused publish is still a publish). Its counters are fields, not a dictionary looked up per frame:
/// a counter wired to the wrong label shows here.
final class FrameCountTests: XCTestCase {
    func testEachKindOfFrameIsCountedOnceUnderItsOwnType() throws {
        // Most of these are refused: a budget they cannot exhaust.
        let socket = try EmbeddedWebSocket(invalidFramesPerMinute: 100)
        defer { socket.stop() }
        let frames = [
            #"{"type":"publish","id":"p","position":{"lat":1,"lon":1,"timestamp":\#(socket.clock.now)}}"#,
            #"{"type":"subscribe","id":"s1","donation":"d-404"}"#,
            #"{"type":"subscribe","id":"s2","donation":"d-405"}"#,
            #"{"type":"unsubscribe","donation":"d-404"}"#,
            #"{"type":"unsubscribe","donation":"d-405"}"#,
            #"{"type":"unsubscribe","donation":"d-406"}"#,
            #"{"type":"teleport"}"#,
            #"{"type":"teleport"}"#,
            #"{"type":"teleport"}"#,
            #"{"type":"teleport"}"#,
        ]
        for frame in frames { try socket.sendText(frame) }
        XCTAssertTrue(socket.isOpen)

        for (type, count) in [("publish", 1), ("subscribe", 2), ("unsubscribe", 3), ("invalid", 4)] {
            XCTAssertEqual(socket.metrics.value(of: #"broker_frames_in_total{type="\#(type)"}"#), Double(count), type)
        }
    }
}
