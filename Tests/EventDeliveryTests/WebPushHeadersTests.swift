import XCTest

@testable import EventDelivery

/// The push request's headers, and the values a push service would refuse.
final class WebPushHeadersTests: XCTestCase {
    func testAPushCarriesItsEncodingLifetimeUrgencyAndTopic() throws {
        let headers = try WebPushHeaders.make(authorization: "vapid t=a.b.c, k=K", ttlSeconds: 600, urgency: "high", topic: "donation-d-1")
        XCTAssertEqual(headers["Authorization"], ["vapid t=a.b.c, k=K"])
        XCTAssertEqual(headers["TTL"], ["600"])
        XCTAssertEqual(headers["Urgency"], ["high"])
        XCTAssertEqual(headers["Topic"], ["donation-d-1"])
        XCTAssertEqual(headers["Content-Encoding"], ["aes128gcm"])
        XCTAssertEqual(headers["Content-Type"], ["application/octet-stream"])
        XCTAssertFalse(try WebPushHeaders.make(authorization: "a", ttlSeconds: 0, urgency: "low", topic: nil).contains(name: "Topic"))
    }

    func testValuesAPushServiceWouldRefuseAreRefusedHere() {
        let cases: [(Int, String, String?, WebPushHeadersError)] = [
            (-1, "normal", nil, .negativeTTL),
            (60, "urgent", nil, .unknownUrgency("urgent")),
            (60, "High", nil, .unknownUrgency("High")),
            (60, "normal", "", .badTopic),
            (60, "normal", String(repeating: "a", count: 33), .badTopic),
            (60, "normal", "donation d-1", .badTopic),
            (60, "normal", "donation.d-1", .badTopic),
        ]
        for (ttl, urgency, topic, expected) in cases {
            XCTAssertThrowsError(try WebPushHeaders.make(authorization: "a", ttlSeconds: ttl, urgency: urgency, topic: topic)) {
                XCTAssertEqual($0 as? WebPushHeadersError, expected)
            }
        }
        XCTAssertNoThrow(try WebPushHeaders.make(authorization: "a", ttlSeconds: 60, urgency: "very-low", topic: String(repeating: "a", count: 32)))
    }
}
