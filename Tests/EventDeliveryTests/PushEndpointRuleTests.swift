import Crypto
import XCTest

@testable import EventDelivery

/// A browser-given push endpoint read as an attacker writes it: only a host name the operator allowed, on whole
/// labels, on the default port unless the operator named another.
final class PushEndpointRuleTests: XCTestCase {
    let hosts = ["fcm.googleapis.com", "*.push.apple.com", "*.notify.windows.com", "updates.push.services.mozilla.com"]

    func testTheRealServicesPass() {
        for endpoint in [
            "https://fcm.googleapis.com/fcm/send/abc:APA91b", "https://web.push.apple.com/QO-x_y", "https://FCM.googleapis.com/x",
            "https://wns2-par02p.notify.windows.com/w/?token=x%2By", "https://updates.push.services.mozilla.com/wpush/v2/x",
            "https://fcm.googleapis.com:443/x",
        ] {
            XCTAssertNil(PushEndpointRule.refusal(endpoint, allowedHosts: hosts), endpoint)
        }
    }

    func testHostsThatAreNotHostNamesAreRefused() {
        let forged = [
            "https://127.0.0.1%00.push.apple.com/x", "https://a%2Eb.push.apple.com/x", "https://web\t.push.apple.com/x",
            "https://web .push.apple.com/x", "https://web\n.push.apple.com/x", "https://evil.example/.push.apple.com/x",
            "https://evil.example\\.push.apple.com/x", "https://user@web.push.apple.com/x", "https://user:pw@web.push.apple.com/x",
            "https://[::1]/x", "https://-a.push.apple.com/x", "https://a..push.apple.com/x",
            "https://web.push.apple.com./x", "https://push.apple.com/x", "https://attackerpush.apple.com/x",
            "https://fcm.googleapis.com.attacker.example/x", "https://xn--fcm.googleapis.com/x", "https://fcm.googleapis.com",
            "https://fcm.googleapis.com/x\u{0}", "https://fcm.googleapis.com/ä", "HTTPS://fcm.googleapis.com/x",
            "https://" + String(repeating: "a", count: 64) + ".push.apple.com/x",
        ]
        for endpoint in forged {
            XCTAssertNotNil(PushEndpointRule.refusal(endpoint, allowedHosts: hosts), endpoint.debugDescription)
        }
    }

    func testOnlyTheDefaultPortUnlessTheOperatorNamesAnother() {
        XCTAssertEqual(
            PushEndpointRule.refusal("https://fcm.googleapis.com:8443/x", allowedHosts: hosts),
            "the port 8443 is not allowed for fcm.googleapis.com; only the default port is")
        XCTAssertNotNil(PushEndpointRule.refusal("https://web.push.apple.com:80/x", allowedHosts: hosts))
        XCTAssertNotNil(PushEndpointRule.refusal("https://fcm.googleapis.com:0/x", allowedHosts: hosts))
        XCTAssertNotNil(PushEndpointRule.refusal("https://fcm.googleapis.com:+443/x", allowedHosts: hosts))
        XCTAssertNil(PushEndpointRule.refusal("https://fcm.googleapis.com:8443/x", allowedHosts: ["fcm.googleapis.com:8443"]))
        XCTAssertNotNil(PushEndpointRule.refusal("https://fcm.googleapis.com/x", allowedHosts: ["fcm.googleapis.com:8443"]))
    }

    func testPlainHTTPOnlyToALoopbackServiceListedByName() {
        XCTAssertNil(PushEndpointRule.refusal("http://127.0.0.1:8080/push/a", allowedHosts: ["127.0.0.1:8080"]))
        XCTAssertNil(PushEndpointRule.refusal("http://localhost/push/a", allowedHosts: ["localhost"]))
        XCTAssertNotNil(PushEndpointRule.refusal("http://127.0.0.1:8081/push/a", allowedHosts: ["127.0.0.1:8080"]), "another port")
        XCTAssertNotNil(PushEndpointRule.refusal("http://127.0.0.1:8080/push/a", allowedHosts: hosts), "not listed")
        XCTAssertEqual(
            PushEndpointRule.refusal("http://web.push.apple.com/x", allowedHosts: hosts),
            "the URL must use https (http only to a loopback push service listed by name)")
        XCTAssertNotNil(PushEndpointRule.refusal("http://10.0.0.1/x", allowedHosts: ["10.0.0.1"]), "http to another machine")
        XCTAssertNil(PushEndpointRule.refusal("https://10.0.0.1/x", allowedHosts: ["10.0.0.1"]), "an IP the operator named exactly")
        XCTAssertNotNil(PushEndpointRule.refusal("https://10.0.0.1/x", allowedHosts: ["*.0.0.1"]), "never an IP by a pattern")
    }

    func testTheSettingTakesHostsPatternsAndPorts() {
        for entry in ["fcm.googleapis.com", "*.push.apple.com", "127.0.0.1:8443", "*.example.org:8443"] {
            XCTAssertTrue(PushEndpointRule.isAllowedHostEntry(entry), entry)
        }
        for entry in ["", "*.", "a b", "a/b", "host:", "host:x", "host:70000", "[::1]", "a%2e.b", "*"] {
            XCTAssertFalse(PushEndpointRule.isAllowedHostEntry(entry), entry)
        }
    }

    func testTheTopicIsKeyedByTheDeploymentsVAPIDKey() {
        let mine = PushTopicKey(vapidKey: .generate())
        let theirs = PushTopicKey(vapidKey: .generate())
        let topic = mine.topic(donation: "d-1")
        XCTAssertEqual(topic.count, 32)
        XCTAssertTrue(topic.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, topic)
        XCTAssertEqual(mine.topic(donation: "d-1"), topic, "one topic per donation, so a newer push replaces the held one")
        XCTAssertNotEqual(mine.topic(donation: "d-2"), topic)
        XCTAssertNotEqual(theirs.topic(donation: "d-1"), topic, "another deployment names the same donation otherwise")
        let unkeyed = Data(SHA256.hash(data: Data("topic|d-1".utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").prefix(32)
        XCTAssertNotEqual(topic, String(unkeyed), "the topic anyone could work out from the id")
        XCTAssertFalse("\(mine)".contains(topic) || String(reflecting: mine).count > 40, "the key does not print")
    }
}
