@testable import BrokerProtocol
import DeterministicRandom
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

    func testEveryByteThatEndsOrBreaksAStringIsFoundWhereverItStands() {
        // The string scan reads eight bytes at a time: a quote, a backslash, a control character or a byte beyond
        // ASCII must be seen in any place of a word, in the bytes after the last whole word, and across words.
        let stops: [UInt8] = [0x22, 0x5C, 0x00, 0x01, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]
        var checked = 0
        // The id first (read a word at a time), and last (its end in the frame's last bytes, read one by one).
        let layouts = [
            (#"{"type":"publish","id":""#, #"","position":{"lat":1.5,"lon":2,"timestamp":3}}"#),
            (#"{"type":"publish","position":{"lat":1.5,"lon":2,"timestamp":3},"id":""#, #""}"#),
        ]
        for (before, after) in layouts {
            for length in 0...24 {
                for lead in 0...8 {
                    // `lead` shifts where the string starts relative to the words.
                    let prefix = Array(before.utf8)
                    let suffix = Array(after.utf8)
                    let padding = Array(repeating: UInt8(ascii: " "), count: lead)
                    let plain = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                    let clean = padding + prefix + plain + suffix
                    let read = clean.withUnsafeBufferPointer(PublishFastPath.parse)
                    XCTAssertEqual(read?.id, String(decoding: plain, as: UTF8.self), "plain, length \(length), lead \(lead)")
                    for position in 0..<length {
                        for stop in stops {
                            var id = plain
                            id[position] = stop
                            let bytes = padding + prefix + id + suffix
                            let fast = bytes.withUnsafeBufferPointer(PublishFastPath.parse)
                            // A quote ends the id early and leaves bytes that are not JSON; anything else is the strict
                            // decoder's.
                            XCTAssertNil(fast, "byte \(stop) at \(position) of \(length), lead \(lead)")
                            checked += 1
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 20_000)
        // Keys go through the same scan: a stop byte in every place of each key.
        for key in ["type", "position", "timestamp", "accuracy"] {
            let frame = #"{"type":"publish","position":{"lat":1,"lon":2,"accuracy":3,"timestamp":4}}"#
            XCTAssertNotNil(fast(frame))
            for position in 0..<key.utf8.count {
                for stop in stops where stop != 0x22 {
                    var broken = Array(key.utf8)
                    broken[position] = stop
                    let text = Array(frame.utf8)
                    let target = Array("\"\(key)\"".utf8)
                    guard let at = (0...(text.count - target.count)).first(where: { Array(text[$0..<($0 + target.count)]) == target }) else {
                        return XCTFail("no key \(key)")
                    }
                    let bytes = Array(text[..<(at + 1)]) + broken + Array(text[(at + 1 + broken.count)...])
                    XCTAssertNil(bytes.withUnsafeBufferPointer(PublishFastPath.parse), "key \(key), byte \(stop) at \(position)")
                }
            }
        }
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
