import NIOCore
import NIOWebSocket
import XCTest

@testable import LocationBroker

/// Fragmented client messages are put back together, within the size limit, and broken fragment sequences
/// are refused with the close code they deserve.
final class MessageAssemblerTests: XCTestCase {
    /// A frame as a client sends it: masked.
    private func frame(_ opcode: WebSocketOpcode, fin: Bool = true, _ text: String) -> WebSocketFrame {
        let key = WebSocketMaskingKey.random()
        var data = ByteBuffer(string: text)
        data.webSocketMask(key)
        return WebSocketFrame(fin: fin, opcode: opcode, maskKey: key, data: data)
    }

    private func text(_ result: Result<MessageAssembler.Message?, MessageAssembler.Failure>) -> String? {
        guard case .success(.text(let buffer))? = Optional(result) else { return nil }
        return String(buffer: buffer)
    }

    func testAWholeFrameIsAMessage() {
        var assembler = MessageAssembler(maxBytes: 100)
        XCTAssertEqual(text(assembler.receive(frame(.text, "{}"))), "{}")
    }

    func testFragmentsAreJoinedInOrder() {
        var assembler = MessageAssembler(maxBytes: 100)
        guard case .success(nil) = assembler.receive(frame(.text, fin: false, "{\"a\":")) else { return XCTFail("not pending") }
        guard case .success(nil) = assembler.receive(frame(.continuation, fin: false, "1,")) else { return XCTFail("not pending") }
        XCTAssertEqual(text(assembler.receive(frame(.continuation, "\"b\":2}"))), "{\"a\":1,\"b\":2}")
        // The next message starts afresh.
        XCTAssertEqual(text(assembler.receive(frame(.text, "[]"))), "[]")
    }

    func testABinaryMessageStaysBinary() {
        var assembler = MessageAssembler(maxBytes: 100)
        _ = assembler.receive(frame(.binary, fin: false, "ab"))
        guard case .success(.binary(let bytes)?) = assembler.receive(frame(.continuation, "cd")) else { return XCTFail("not binary") }
        XCTAssertEqual(String(buffer: bytes), "abcd")
    }

    func testAMessageOverTheLimitIsRefusedAsSoonAsItIs() {
        var assembler = MessageAssembler(maxBytes: 10)
        XCTAssertEqual(assembler.receive(frame(.text, String(repeating: "x", count: 11))).failure, .tooLarge)
        var fragmented = MessageAssembler(maxBytes: 10)
        _ = fragmented.receive(frame(.text, fin: false, "123456"))
        XCTAssertEqual(fragmented.receive(frame(.continuation, fin: false, "78901")).failure, .tooLarge)
        XCTAssertEqual(MessageAssembler.Failure.tooLarge.closeCode, .messageTooLarge)
    }

    func testAContinuationWithNothingToContinueIsAProtocolError() {
        var assembler = MessageAssembler(maxBytes: 100)
        XCTAssertEqual(assembler.receive(frame(.continuation, "{}")).failure, .unexpectedContinuation)
        XCTAssertEqual(MessageAssembler.Failure.unexpectedContinuation.closeCode, .protocolError)
    }

    func testANewMessageBeforeTheLastIsFinishedIsAProtocolError() {
        var assembler = MessageAssembler(maxBytes: 100)
        _ = assembler.receive(frame(.text, fin: false, "{"))
        XCTAssertEqual(assembler.receive(frame(.text, "{}")).failure, .unfinishedMessage)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
