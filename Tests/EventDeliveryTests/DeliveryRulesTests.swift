import XCTest

@testable import EventDelivery

/// Where deliveries may go, and what an answer means for a webhook and for a push.
final class DeliveryRulesTests: XCTestCase {
    let pushHosts = ["fcm.googleapis.com", "*.push.apple.com", "*.notify.windows.com", "updates.push.services.mozilla.com"]

    func testHTTPSIsRequiredAndHTTPOnlyReachesThisMachine() {
        XCTAssertNil(DeliveryURLRule.check("https://hooks.example.org/ponte", allowedHosts: nil, allowLoopbackHTTP: false))
        for loopback in ["http://127.0.0.1:8080/h", "http://127.1.2.3/h", "http://localhost:9/h", "http://LOCALHOST/h", "http://[::1]:80/h"] {
            XCTAssertNil(DeliveryURLRule.check(loopback, allowedHosts: nil, allowLoopbackHTTP: true), loopback)
            XCTAssertNotNil(DeliveryURLRule.check(loopback, allowedHosts: nil, allowLoopbackHTTP: false), loopback)
        }
        for outside in [
            "http://hooks.example.org/h", "http://128.0.0.1/h", "http://127.0.0.1.nip.io/h", "http://localhost.example.org/h",
            "http://10.0.0.1/h", "http://[::2]/h", "http://0x7f.0.0.1/h", "http://127.1/h",
        ] {
            XCTAssertEqual(
                DeliveryURLRule.check(outside, allowedHosts: nil, allowLoopbackHTTP: true), "the URL must use https (http only to a loopback address)",
                outside)
        }
        XCTAssertEqual(DeliveryURLRule.check("ftp://hooks.example.org/h", allowedHosts: nil, allowLoopbackHTTP: true), "the URL must use https")
        XCTAssertEqual(DeliveryURLRule.check("hooks.example.org/h", allowedHosts: nil, allowLoopbackHTTP: true), "not a URL")
        XCTAssertEqual(DeliveryURLRule.check("https:///h", allowedHosts: nil, allowLoopbackHTTP: true), "the URL has no host")
        XCTAssertNotNil(DeliveryURLRule.check("https://user:pw@hooks.example.org/h", allowedHosts: nil, allowLoopbackHTTP: true))
    }

    func testOnlyTheAllowedPushServicesAreReached() {
        for allowed in [
            "https://fcm.googleapis.com/fcm/send/x", "https://web.push.apple.com/QO", "https://FCM.googleapis.com/x",
            "https://wns2-par02p.notify.windows.com/w/?token=x", "https://updates.push.services.mozilla.com/wpush/v2/x",
        ] {
            XCTAssertNil(DeliveryURLRule.check(allowed, allowedHosts: pushHosts, allowLoopbackHTTP: false), allowed)
        }
        for refused in [
            "https://push.apple.com/x",  // the pattern needs a name before the suffix
            "https://evilpush.apple.com.attacker.example/x", "https://attackerpush.apple.com/x",
            "https://fcm.googleapis.com.attacker.example/x", "https://fcm.googleapis.com@attacker.example/x",
            "https://attacker.example/fcm.googleapis.com", "https://xfcm.googleapis.com/x",
        ] {
            XCTAssertNotNil(DeliveryURLRule.check(refused, allowedHosts: pushHosts, allowLoopbackHTTP: false), refused)
        }
        XCTAssertEqual(
            DeliveryURLRule.check("https://attacker.example/x", allowedHosts: pushHosts, allowLoopbackHTTP: false),
            "the host attacker.example is not an allowed push service")
        XCTAssertNotNil(DeliveryURLRule.check("https://fcm.googleapis.com/x", allowedHosts: [], allowLoopbackHTTP: false))
    }

    func testAWebhookIsDeliveredOn2xxAndRetriedOnEverythingElse() {
        for status in [200, 201, 202, 204, 299] {
            XCTAssertEqual(DeliveryVerdict.webhook(.status(status)), .delivered, "\(status)")
        }
        for status in [301, 307, 400, 401, 404, 408, 410, 413, 429, 500, 503] {
            XCTAssertEqual(DeliveryVerdict.webhook(.status(status)), .retry, "\(status)")
        }
        XCTAssertEqual(DeliveryVerdict.webhook(.failed("timed out")), .retry)
    }

    func testAPushIsDeliveredRetriedDroppedOrItsSubscriptionForgotten() {
        XCTAssertEqual(DeliveryVerdict.push(.status(201)), .delivered)
        XCTAssertEqual(DeliveryVerdict.push(.status(200)), .delivered)
        XCTAssertEqual(DeliveryVerdict.push(.status(404)), .subscriptionGone)
        XCTAssertEqual(DeliveryVerdict.push(.status(410)), .subscriptionGone)
        for status in [408, 429, 500, 502, 503, 599] {
            XCTAssertEqual(DeliveryVerdict.push(.status(status)), .retry, "\(status)")
        }
        XCTAssertEqual(DeliveryVerdict.push(.failed("connection refused")), .retry)
        for status in [301, 307, 400, 401, 403, 413] {
            XCTAssertEqual(DeliveryVerdict.push(.status(status)), .drop, "\(status)")
        }
    }
}
