import XCTest

@testable import BrokerAuth

/// How long a JWKS is kept: its `Cache-Control: max-age` within bounds, and how often an unknown `kid` may fetch it
/// again (`JWKSTests` rotates keys against a broker).
final class JWKSTimingTests: XCTestCase {
    func testTheCacheTimeComesFromCacheControlWithinBounds() {
        // Firebase's answer carries a header like this one.
        XCTAssertEqual(JWKSSource.maxAge(["public, max-age=19800, must-revalidate, no-transform"]), .seconds(19800))
        XCTAssertEqual(JWKSSource.maxAge(["no-cache"]), .zero)
        XCTAssertEqual(JWKSSource.maxAge(["public", "s-maxage=60"]), nil)
        XCTAssertEqual(JWKSSource.maxAge([]), nil)
        let timing = JWKSTiming()
        XCTAssertEqual(timing.refreshDelay(maxAge: .seconds(19800)), .seconds(15840), "refreshed at 80 % of max-age")
        XCTAssertEqual(timing.refreshDelay(maxAge: .zero), .seconds(48), "at least 60 s of caching")
        XCTAssertEqual(timing.refreshDelay(maxAge: .seconds(86400 * 7)), .seconds(17280), "at most 6 h of caching")
        XCTAssertEqual(timing.refreshDelay(maxAge: nil), .seconds(240), "5 minutes without max-age")
        XCTAssertEqual(timing.unknownKeyInterval, .seconds(30))
    }
}
