import Foundation
import XCTest

@testable import BrokerAuth

/// A token's parts are base64url without padding; the byte-by-byte decoder must agree with Foundation's.
final class Base64URLTests: XCTestCase {
    func testTheDecoderAgreesWithFoundationOnEveryLength() {
        for length in 0..<40 {
            let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 251) })
            let url = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(Base64URL.decode(Array(url.utf8)), bytes, url)
        }
    }

    func testAStrictPartRefusesWhatIsNotBase64URL() {
        for text in ["ab+c", "ab/c", "abc=", "a", "ab c", "ab\u{E9}", "ab.c"] {
            XCTAssertNil(Base64URL.decode(Array(text.utf8)), text)
        }
        // A header read only to choose the verifier may be plain base64.
        XCTAssertEqual(Base64URL.decode(Array("+/8=".utf8), strict: false), Data([0xFB, 0xFF]))
    }
}

/// The byte-by-byte decoder against the translation through Foundation it replaced, on random text.
final class Base64URLOracleTests: XCTestCase {
    /// The former `Base64URL.decode`: refuse `+ / =` when strict, translate `- _`, pad, `Data(base64Encoded:)`.
    private func oracle(_ text: [UInt8], strict: Bool) -> Data? {
        var base64 = [UInt8]()
        for byte in text {
            switch byte {
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
                if strict { return nil }
                base64.append(byte)
            default: base64.append(byte)
            }
        }
        base64.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - base64.count % 4) % 4))
        return Data(base64Encoded: Data(base64))
    }

    func testRandomTextDecodesAsThroughFoundation() {
        var random = JOSEReaderDifferentialTests.SeededGenerator(state: 64)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let junk = Array("+/= .\n\0é".utf8) + [0x80, 0xFF]
        var decoded = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &random)
            let text = (0..<length).map { _ in
                Int.random(in: 0..<50, using: &random) == 0 ? junk.randomElement(using: &random)! : alphabet.randomElement(using: &random)!
            }
            for strict in [true, false] {
                let mine = Base64URL.decode(text, strict: strict)
                XCTAssertEqual(mine, oracle(text, strict: strict), "\(String(decoding: text, as: UTF8.self).debugDescription) strict \(strict)")
                if mine != nil { decoded += 1 }
            }
        }
        // Both answers must be common: text of length 4n+1 and junk are refused, the rest decodes.
        XCTAssertGreaterThan(decoded, 10_000)
        XCTAssertLessThan(decoded, 38_000)
    }

    func testTheLastCharactersUnusedBitsAreIgnoredAsFoundationDoes() {
        XCTAssertEqual(Base64URL.decode(Array("AB".utf8)), Data([0]))
        XCTAssertEqual(Base64URL.decode(Array("QUJ".utf8)), Data([65, 66]))
        XCTAssertNil(Base64URL.decode(Array("A".utf8)))
        XCTAssertEqual(Base64URL.decode(Array("".utf8)), Data())
    }
}
