@testable import BrokerProtocol
import XCTest

/// The fast path for plain publish frames reads exactly what the strict decoder reads, and leaves everything
/// else (every error included) to it.
final class PublishFastPathTests: XCTestCase {
    private let decoder = ClientFrameDecoder()

    private func fast(_ text: String) -> ClientFrame.Publish? {
        Array(text.utf8).withUnsafeBufferPointer(PublishFastPath.parse)
    }

    private func strict(_ text: String) -> Result<ClientFrame, ClientFrameDecoder.Rejection> {
        decoder.decodeStrictly(Array(text.utf8))
    }

    /// Whatever the fast path accepts, the strict decoder accepts as the same frame.
    private func assertAgrees(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let publish = fast(text) else { return }
        XCTAssertEqual(strict(text), .success(.publish(publish)), text, file: file, line: line)
    }

    func testThePlainFramesPhonesSendTakeTheFastPathAndReadAsTheStrictDecoderReadsThem() {
        let frames = [
            #"{"type":"publish","position":{"lat":-34.6037,"lon":-58.3816,"timestamp":1763757670000}}"#,
            #"{"type":"publish","id":"p-1","position":{"lat":-34.6037,"lon":-58.3816,"accuracy":5,"speed":8.25,"heading":271.5,"timestamp":1763757670000}}"#,
            #"{"position":{"timestamp":1763757670000,"heading":0,"lon":0,"lat":0},"channel":"Vol@Example.org","type":"publish"}"#,
            #" { "type" : "publish" ,"id":"" , "position" : { "lat" : -0.0 , "lon" : 180 , "timestamp" : -5 } } "#,
            "{\"type\":\"publish\",\n\t\"position\":{\"lat\":1.000000000000000000001,\"lon\":0.1,\"timestamp\":0}}\r\n",
            #"{"type":"publish","position":{"lat":89.99999999999999999,"lon":-179.123456789012345678,"timestamp":999999999999999}}"#,
        ]
        for text in frames {
            XCTAssertNotNil(fast(text), text)
            assertAgrees(text)
        }
    }

    func testAnythingUnusualIsLeftToTheStrictDecoder() {
        let frames = [
            #"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1.5}}"#,
            #"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1.0}}"#,
            #"{"type":"publish","position":{"lat":1e2,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1e3}}"#,
            #"{"type":"publish","position":{"lat":01,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","position":{"lat":1.,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","position":{"lat":null,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1,"altitude":3}}"#,
            #"{"type":"publish","position":{"lat":1,"lat":2,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","type":"publish","position":{"lat":1,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","id":"a\"b","position":{"lat":1,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","id":"é","position":{"lat":1,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","id":null,"position":{"lat":1,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","channel":"has space@x.org","position":{"lat":1,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish","since":3,"position":{"lat":1,"lon":1,"timestamp":1}}"#,
            #"{"type":"subscribe","channel":"a@x.org"}"#,
            #"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1}}x"#,
            #"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1},}"#,
            #"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1234567890123456}}"#,
            #"{"type":"publish","id":"\#(String(repeating: "i", count: 65))","position":{"lat":1,"lon":1,"timestamp":1}}"#,
            #"{"type":"publish"}"#,
            "",
            "{}",
        ]
        for text in frames {
            XCTAssertNil(fast(text), text)
        }
    }

    func testRandomlyDamagedFramesNeverReadDifferentlyOnTheFastPath() {
        var generator = SeededRandom(seed: 20_261_122)
        let templates = [
            #"{"type":"publish","id":"p-17","channel":"vol@example.org","position":{"lat":-34.6037,"lon":-58.3816,"accuracy":5,"speed":8.25,"heading":271.5,"timestamp":1763757670000}}"#,
            #"{"type":"publish","position":{"lat":0.5,"lon":-0.25,"timestamp":1}}"#,
        ]
        let alphabet = Array(#"{}[]:,"\ .-+0123456789eEabnlux"#.utf8) + [0x00, 0x0A, 0xC3, 0xA9]
        var accepted = 0
        for round in 0..<20_000 {
            var bytes = Array(templates[round % templates.count].utf8)
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let at = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                default: bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            guard let publish = bytes.withUnsafeBufferPointer(PublishFastPath.parse) else { continue }
            accepted += 1
            XCTAssertEqual(decoder.decodeStrictly(bytes), .success(.publish(publish)), String(decoding: bytes, as: UTF8.self))
        }
        // The damage often leaves a valid frame (a digit changed), so the comparison above is not vacuous.
        XCTAssertGreaterThan(accepted, 1_000)
    }

    func testTheRawBytesEntryDecodesAsTheCollectionEntryDoes() {
        var generator = SeededRandom(seed: 20_261_124)
        let template = Array(#"{"type":"publish","id":"p-17","position":{"lat":-34.6037,"lon":-58.3816,"heading":271.5,"timestamp":1763757670000}}"#.utf8)
        let alphabet = Array(#"{}:,"\ .-09ae"#.utf8)
        var frames = [template, Array(#"{"type":"subscribe","id":"s","donation":"d-1"}"#.utf8), Array("{}".utf8), [], [0xC3, 0xA9]]
        for _ in 0..<2_000 {
            var bytes = template
            let at = Int(generator.next() % UInt64(bytes.count))
            bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
            frames.append(bytes)
        }
        for bytes in frames {
            // The connection handler's bytes are not at the start of their buffer.
            let padded = [0x20] + bytes
            let raw = padded.withUnsafeBytes { decoder.decode(UnsafeRawBufferPointer(rebasing: $0.dropFirst())) }
            XCTAssertEqual(raw, decoder.decode(bytes), String(decoding: bytes, as: UTF8.self))
        }
    }

    func testDecimalNumbersReadToTheSameDoubleBothWays() {
        var generator = SeededRandom(seed: 7)
        for _ in 0..<5_000 {
            let integer = generator.next() % 1_000
            let fraction = String(generator.next() % 10_000_000_000_000_000_000)
            let digits = String(repeating: "0", count: Int(generator.next() % 4)) + fraction
            let text = #"{"type":"publish","position":{"lat":\#(integer).\#(digits),"lon":-\#(integer).\#(digits),"timestamp":1}}"#
            XCTAssertNotNil(fast(text), text)
            assertAgrees(text)
        }
    }
}
