import NIOCore
import XCTest

@testable import BrokerTestSupport

/// A text message is read where it is unmasked, a scratch copy that lives only while the message is handled, and
/// the next message is unmasked into the same place: nothing a message leaves behind may point into
/// it. What stays after the handling (a refusal's `re`, a subscription's donation, a publish's values) must be
/// the first message's own, even once the next one has overwritten the bytes it was read from.
final class InPlaceReadTests: XCTestCase {
    private typealias Socket = EmbeddedWebSocket

    func testWhatAMessageLeavesBehindIsItsOwnAfterTheNextIsRead() throws {
        let socket = try Socket()
        defer { socket.stop() }
        _ = try socket.frames()
        // The replies wait in the outbox, unwritten, while the next message is read.
        socket.setWritable(false)
        // The same length, so that the second is unmasked over the very bytes of the first.
        let first = #"{"type":"subscribe","id":"first-aaaa","donation":"d-404-aaaa"}"#
        let second = #"{"type":"subscribe","id":"secnd-bbbb","donation":"d-404-bbbb"}"#
        XCTAssertEqual(first.utf8.count, second.utf8.count)
        try socket.sendTextsInOneRead([first, second, second].map { Array($0.utf8) })

        socket.setWritable(true)
        let replies = try socket.frames().map(\.text)
        XCTAssertEqual(replies.count, 3, "\(replies)")
        XCTAssertTrue(replies.first?.contains(#""re":"first-aaaa""#) ?? false, "\(replies)")
        XCTAssertFalse(replies.first?.contains("bbbb") ?? true, "the first reply shows the second message's bytes: \(replies)")
        XCTAssertTrue(replies.dropFirst().allSatisfy { $0.contains(#""re":"secnd-bbbb""#) }, "\(replies)")
    }

    func testInvalidUTF8AfterAValidMessageInTheSameReadIsStillRefusedWith1007() throws {
        let socket = try Socket()
        defer { socket.stop() }
        _ = try socket.frames()
        var bytes = Array(#"{"type":"subscribe","id":"s1","donation":"d-404"}"#.utf8)
        // An overlong slash in the ninth word: valid ASCII before it, as the first message is.
        bytes[20] = 0xC0
        bytes[21] = 0xAF
        try socket.sendTextsInOneRead([Array(#"{"type":"subscribe","id":"s1","donation":"d-404"}"#.utf8), bytes])
        let frames = try socket.frames()
        XCTAssertTrue(frames.first?.text.contains(#""re":"s1""#) ?? false, "\(frames.map(\.text))")
        XCTAssertEqual(frames.last?.close?.code, 1007)
    }
}
