import Foundation
import XCTest

@testable import LocationBroker

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
