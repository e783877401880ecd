import BrokerProtocol
import DeterministicRandom
import XCTest

@testable import BrokerWebSocket

/// A text frame's UTF-8 check (1007 otherwise) reads ASCII eight bytes at a time: it must say exactly what the
/// standard library's validation says, wherever the first byte that is not ASCII stands: in the first word, the
/// last, across two words, or in the bytes after the last whole word.
final class UTF8ValidationTests: XCTestCase {
    /// Sequences that are not ASCII: valid ones, and each way UTF-8 can be broken.
    private let sequences: [(name: String, bytes: [UInt8])] = [
        ("a lone continuation byte", [0x80]),
        ("a continuation byte 0xBF", [0xBF]),
        ("é", [0xC3, 0xA9]),
        ("€", [0xE2, 0x82, 0xAC]),
        ("an emoji", [0xF0, 0x9F, 0x98, 0x80]),
        ("an overlong slash", [0xC0, 0xAF]),
        ("an overlong three-byte", [0xE0, 0x80, 0xAF]),
        ("a surrogate", [0xED, 0xA0, 0x80]),
        ("beyond U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
        ("a truncated two-byte", [0xC3]),
        ("a truncated three-byte", [0xE2, 0x82]),
        ("a truncated four-byte", [0xF0, 0x9F, 0x98]),
        ("0xFF", [0xFF]),
        ("0xF5", [0xF5, 0x80, 0x80, 0x80]),
    ]

    func testEverySequenceAtEveryPositionOfEveryLengthIsJudgedAsTheStandardLibraryJudgesIt() {
        var generator = SeededRandom(seed: 0x07F8_1007)
        var checked = 0
        for length in 0...40 {
            for sequence in sequences {
                for position in 0...length {
                    var bytes = (0..<length).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
                    bytes.insert(contentsOf: sequence.bytes, at: position)
                    // Sometimes a second sequence further on, so that a valid first one does not end the check.
                    if Bool.random(using: &generator), let other = sequences.randomElement(using: &generator) {
                        bytes.insert(contentsOf: other.bytes, at: Int.random(in: position...bytes.count, using: &generator))
                    }
                    let lead = Int.random(in: 0...7, using: &generator)
                    assertJudgedAsTheStandardLibrary(bytes, lead: lead, "\(sequence.name) at \(position) of \(bytes.count)")
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 10_000)
    }

    func testASCIIOfEveryLengthIsValid() {
        var generator = SeededRandom(seed: 0xA5C1)
        for length in 0...40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...0x7F, using: &generator) }
            assertJudgedAsTheStandardLibrary(bytes, lead: length % 8, "ASCII of \(length)")
            XCTAssertTrue(bytes.withUnsafeBytes(\.isValidUTF8))
        }
    }

    func testA0x80AtTheEdgesOfTheWordsIsSeen() {
        for length in [8, 9, 15, 16, 17, 24, 40] {
            for offset in [0, 6, 7, 8, 9, 14, 15, 16, 23, length - 1] where offset < length {
                var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                bytes[offset] = 0x80
                XCTAssertFalse(bytes.withUnsafeBytes(\.isValidUTF8), "0x80 at offset \(offset) of \(length)")
            }
        }
    }

    /// Checks `bytes` placed `lead` bytes into their buffer (a frame is not always on a word boundary).
    private func assertJudgedAsTheStandardLibrary(_ bytes: [UInt8], lead: Int, _ message: String, line: UInt = #line) {
        let expected = String(validating: bytes, as: UTF8.self) != nil
        let padded = Array(repeating: UInt8(0xFF), count: lead) + bytes + [0xFF]
        let judged = padded.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[lead..<(lead + bytes.count)]).isValidUTF8 }
        XCTAssertEqual(judged, expected, message, line: line)
    }
}
