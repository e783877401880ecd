import Foundation
import XCTest

@testable import BrokerClient

/// The client renews a token only when it is about to expire: read from the JWT's `exp`, unsigned.
final class TokenExpiryTests: XCTestCase {
    private func jwt(claims: String) -> String {
        let payload = Data(claims.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "eyJhbGciOiJIUzI1NiJ9.\(payload).c2lnbmF0dXJl"
    }

    func testATokenIsNearExpiryWithinTheMarginOnly() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = jwt(claims: #"{"sub":"vol@example.org","exp":1800000100}"#)
        XCTAssertEqual(TokenExpiry.expiry(of: token), Date(timeIntervalSince1970: 1_800_000_100))
        XCTAssertFalse(TokenExpiry.isNear(token, margin: .seconds(60), now: now), "100 s left")
        XCTAssertTrue(TokenExpiry.isNear(token, margin: .seconds(120), now: now))
        XCTAssertTrue(TokenExpiry.isNear(token, margin: .seconds(60), now: now + 3600), "expired")
    }

    func testATokenThatIsNotAJWTWithExpIsRenewedOnlyWhenRefused() {
        XCTAssertNil(TokenExpiry.expiry(of: "opaque-token"))
        XCTAssertFalse(TokenExpiry.isNear("opaque-token", margin: .seconds(60)))
        XCTAssertFalse(TokenExpiry.isNear(jwt(claims: #"{"sub":"vol@example.org"}"#), margin: .seconds(60)))
    }
}
