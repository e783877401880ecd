import Foundation
import XCTest

@testable import BrokerServer

/// The `Date` header's value (RFC 9110 §5.6.7, IMF-fixdate).
final class HTTPDateTests: XCTestCase {
    func testInstantsAreWrittenAsIMFFixdate() {
        let date = HTTPDate()
        // RFC 9110's own example.
        XCTAssertEqual(date.text(for: Date(timeIntervalSince1970: 784_111_777)), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(date.text(for: Date(timeIntervalSince1970: 0)), "Thu, 01 Jan 1970 00:00:00 GMT")
        // A leap day, and the second's fraction dropped.
        XCTAssertEqual(date.text(for: Date(timeIntervalSince1970: 1_709_251_199.9)), "Thu, 29 Feb 2024 23:59:59 GMT")
        XCTAssertEqual(date.text(for: Date(timeIntervalSince1970: 1_709_251_200)), "Fri, 01 Mar 2024 00:00:00 GMT")
    }

    func testTheTextChangesWithTheSecond() {
        let date = HTTPDate()
        let first = date.text(for: Date(timeIntervalSince1970: 1_800_000_000.2))
        XCTAssertEqual(date.text(for: Date(timeIntervalSince1970: 1_800_000_000.9)), first)
        XCTAssertNotEqual(date.text(for: Date(timeIntervalSince1970: 1_800_000_001)), first)
        XCTAssertEqual(date.text(for: Date(timeIntervalSince1970: 1_800_000_001)), "Fri, 15 Jan 2027 08:00:01 GMT")
    }
}
