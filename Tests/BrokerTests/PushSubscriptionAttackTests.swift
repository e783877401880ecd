import BrokerProtocol
import Crypto
import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The push routes as an attacker sees them: a way to make the broker POST to an address of their choosing, to
/// hear of a donation that is not theirs, or to silence someone else's notifications. One broker on SQLite with
/// Web Push on, whose only allowed push service is a real HTTP server in the test process on 127.0.0.1.
final class PushSubscriptionAttackTests: XCTestCase {
    private var broker: LiveBroker!
    /// The push service: answers 201, except 410 under `/gone` (a subscription it has forgotten) and 503 under
    /// `/failing` (a browser whose push service does not take pushes).
    private var pushService: EventReceiver!

    override func setUp() async throws {
        pushService = try await startReceiver { request, _ in
            .status(request.path.hasPrefix("/gone") ? 410 : request.path.hasPrefix("/failing") ? 503 : 201)
        }
        let port = pushService.port
        broker = try await startBroker { configuration in
            configuration.pushSubject = "https://operations.example.org/contact"
            // The stand-in listens on a port of its own, which the operator allows by name; the real services' names
            // are the defaults an attacker would aim at.
            configuration.pushServiceHosts = ["127.0.0.1", "127.0.0.1:\(port)", "*.push.apple.com", "fcm.googleapis.com"]
        }
    }

    // MARK: - Helpers

    private func watchLink(_ donation: String) async throws -> String {
        let response = try await broker.backend(.post, "/v1/donations/\(donation)/watch-token")
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? .init()))
        let object = try JSONSerialization.jsonObject(with: Data(buffer: response.body ?? .init())) as? [String: Any]
        return try XCTUnwrap(object?["token"] as? String)
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A browser's real keys: a P-256 public point and a 16-byte auth secret.
    private static func browserKeys() -> (p256dh: String, auth: String) {
        let point = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        return (base64URL(point), base64URL(Data((0..<16).map { _ in UInt8.random(in: 0...255) })))
    }

    private static func subscriptionJSON(endpoint: String, p256dh: String? = nil, auth: String? = nil) -> String {
        let keys = browserKeys()
        let object: [String: Any] = ["endpoint": endpoint, "expirationTime": NSNull(), "keys": ["p256dh": p256dh ?? keys.p256dh, "auth": auth ?? keys.auth]]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
    }

    private func subscribe(_ body: String, authorization: String?) async throws -> TestClient.Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let authorization { headers[.authorization] = authorization }
        return try await broker.request(.post, "/v1/push/subscriptions", headers: headers, body: body)
    }

    private func subscribe(_ endpoint: String, link: String) async throws -> TestClient.Response {
        try await subscribe(Self.subscriptionJSON(endpoint: endpoint), authorization: "Bearer \(link)")
    }

    private func unsubscribe(_ endpoint: String, link: String) async throws -> TestClient.Response {
        try await broker.request(
            .delete, "/v1/push/subscriptions", headers: [.contentType: "application/json", .authorization: "Bearer \(link)"],
            body: #"{"endpoint":"\#(endpoint)"}"#)
    }

    /// The endpoints the broker's store holds for `donation`.
    private func storedEndpoints(_ donation: String) async throws -> [String] {
        let queue = try DatabaseQueue(path: broker.database)
        defer { try? queue.close() }
        return try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT endpoint FROM push_subscription WHERE donation = ? ORDER BY endpoint", arguments: [donation])
        }
    }

    private func expectStored(_ donation: String, _ expected: [String], _ message: String = "", line: UInt = #line) async throws {
        let stored = try await storedEndpoints(donation)
        XCTAssertEqual(stored, expected, message, line: line)
    }

    private func expectSubscribe(
        _ endpoint: String, link: String, _ status: HTTPResponse.Status, _ message: String = "", line: UInt = #line
    ) async throws {
        let response = try await subscribe(endpoint, link: link)
        XCTAssertEqual(response.status, status, "\(message) \(String(buffer: response.body ?? .init()))", line: line)
    }

    private func pushes(to path: String) -> [EventReceiver.Received] {
        pushService.received.filter { $0.path == path }
    }

    // MARK: - Who may subscribe

    func testOnlyALiveWatchLinkOfTheDonationSubscribes() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        try await broker.put("d-2", state: .beingLookedFor)
        try await broker.put("d-ended", state: .beingLookedFor)
        let endedLink = try await watchLink("d-ended")
        try await broker.put("d-ended", state: .cancelled)
        let body = Self.subscriptionJSON(endpoint: pushService.url + "/a")

        let clientToken = try await LiveBroker.token("donor@example.org")
        let attempts: [(authorization: String?, what: String)] = [
            (nil, "no link"), ("Bearer \(clientToken)", "the donor's own client token"), ("Bearer not.a.token", "a made-up token"),
            ("Bearer \(endedLink)", "the link of a donation that has ended"),
        ]
        for (authorization, what) in attempts {
            let response = try await subscribe(body, authorization: authorization)
            XCTAssertEqual(response.status, .unauthorized, "\(what): \(String(buffer: response.body ?? .init()))")
            XCTAssertFalse(response.error?.message.isEmpty ?? true, "\(what) is told why")
        }
        try await expectStored("d-ended", [])
        try await expectStored("d-1", [])

        // A link binds the subscription to its own donation, whatever the caller would like.
        let response = try await subscribe(pushService.url + "/a", link: try await watchLink("d-2"))
        XCTAssertEqual(response.status, .created)
        XCTAssertEqual(String(buffer: response.body ?? .init()), #"{"donation":"d-2"}"#)
        try await expectStored("d-1", [])
    }

    // MARK: - Where the broker may be made to POST

    func testAnEndpointOffTheAllowedPushServicesIsRefusedAndNeverContacted() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        let link = try await watchLink("d-1")
        let port = pushService.port
        let refused = [
            "http://10.0.0.1/push", "http://169.254.169.254/latest/meta-data/", "https://evil.example/push", "http://192.168.1.1:8080/",
            "http://user:pass@127.0.0.1:\(port)/credentials", "http://127.0.0.1@evil.example/push", "https://127.0.0.1.evil.example/push",
            "ftp://127.0.0.1:\(port)/ftp", "file:///etc/passwd", "/relative/push", "not a url at all",
            "http://127.0.0.1:\(port)/long/" + String(repeating: "x", count: 2_100),
        ]
        for endpoint in refused {
            let response = try await subscribe(endpoint, link: link)
            XCTAssertEqual(response.status, .forbidden, "\(endpoint.prefix(80)): \(String(buffer: response.body ?? .init()))")
            XCTAssertEqual(response.error?.code, .forbidden)
            XCTAssertFalse(response.error?.message.isEmpty ?? true, "\(endpoint.prefix(80)) is told why")
        }
        try await expectStored("d-1", [], "none of them stored")

        // A push event for the donation: nothing may reach the push service for the refused endpoints.
        let allowed = pushService.url + "/allowed"
        try await expectSubscribe(allowed, link: link, .created)
        try await broker.put("d-1", state: .pickedByVolunteer)
        try await broker.put("d-1", state: .beingTakenTo)
        try await pushService.waitFor("the allowed endpoint gets the push") { $0.contains { $0.path == "/allowed" } }
        XCTAssertEqual(pushService.received.map { "\($0.method) \($0.path)" }, ["POST /allowed"], "only the allowed endpoint was ever contacted")
    }

    // MARK: - Keys

    func testKeysThatCannotEncryptAreRefused() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        let link = try await watchLink("d-1")
        let endpoint = pushService.url + "/a"
        let good = Self.browserKeys()
        let notOnTheCurve = Self.base64URL(Data([4] + [UInt8](repeating: 7, count: 64)))
        let compressed = Self.base64URL(Data([2] + [UInt8](repeating: 7, count: 32)))
        let cases: [(String, String)] = [
            (Self.subscriptionJSON(endpoint: endpoint, p256dh: notOnTheCurve), "a point not on P-256"),
            (Self.subscriptionJSON(endpoint: endpoint, p256dh: compressed), "a compressed point"),
            (Self.subscriptionJSON(endpoint: endpoint, p256dh: "!!!not-base64!!!"), "p256dh that is not base64url"),
            (Self.subscriptionJSON(endpoint: endpoint, auth: Self.base64URL(Data(repeating: 1, count: 15))), "a 15-byte auth"),
            (Self.subscriptionJSON(endpoint: endpoint, auth: Self.base64URL(Data(repeating: 1, count: 17))), "a 17-byte auth"),
            (Self.subscriptionJSON(endpoint: endpoint, p256dh: good.p256dh, auth: ""), "an empty auth"),
            (#"{"endpoint":"\#(endpoint)"}"#, "no keys"),
            (#"{"endpoint":"#, "broken JSON"),
        ]
        for (body, what) in cases {
            let response = try await subscribe(body, authorization: "Bearer \(link)")
            XCTAssertEqual(response.status, .badRequest, "\(what): \(String(buffer: response.body ?? .init()))")
            XCTAssertFalse(response.error?.message.isEmpty ?? true, "\(what) is told why")
        }
        try await expectStored("d-1", [])
    }

    // MARK: - Limits and other donors' subscriptions

    func testTheSixthBrowserOfADonationIsRefused() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        let link = try await watchLink("d-1")
        for browser in 1...5 {
            try await expectSubscribe(pushService.url + "/b\(browser)", link: link, .created)
        }
        let sixth = try await subscribe(pushService.url + "/b6", link: link)
        XCTAssertEqual(sixth.status, .tooManyRequests, String(buffer: sixth.body ?? .init()))
        XCTAssertEqual(sixth.error?.code, .limitReached)
        try await expectSubscribe(pushService.url + "/b1", link: link, .created, "a browser subscribing again is not a sixth")
        let stored = try await storedEndpoints("d-1")
        XCTAssertEqual(stored.count, 5)
    }

    func testAnotherDonationsLinkCannotRemoveThisDonationsSubscription() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        try await broker.put("d-2", state: .beingLookedFor)
        let mine = pushService.url + "/mine"
        try await expectSubscribe(mine, link: try await watchLink("d-1"), .created)

        let response = try await unsubscribe(mine, link: try await watchLink("d-2"))
        XCTAssertEqual(response.status, .noContent, "the answer tells the stranger nothing")
        try await expectStored("d-1", [mine])
        try await broker.put("d-1", state: .pickedByVolunteer)
        try await broker.put("d-1", state: .beingTakenTo)
        try await pushService.waitFor("d-1's push still reaches its browser") { $0.contains { $0.path == "/mine" } }

        // The same browser asks for d-2's pushes as well (a donor with two donations): that takes nothing from d-1,
        // and turning d-2's off leaves d-1's on.
        let other = try await watchLink("d-2")
        try await expectSubscribe(mine, link: other, .created)
        try await expectStored("d-1", [mine])
        try await expectStored("d-2", [mine])
        let turnedOff = try await unsubscribe(mine, link: other)
        XCTAssertEqual(turnedOff.status, .noContent)
        try await expectStored("d-2", [])
        try await expectStored("d-1", [mine], "d-2's link removed d-1's subscription")
        let removed = try await unsubscribe(mine, link: try await watchLink("d-1"))
        XCTAssertEqual(removed.status, .noContent)
        try await expectStored("d-1", [], "the donation's own link removes it")
    }

    // MARK: - What the push service sees, and the end

    func testAForgottenSubscriptionIsDeletedAndPushesStopWhenTheDonationEnds() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        let link = try await watchLink("d-1")
        try await expectSubscribe(pushService.url + "/browser", link: link, .created)
        try await expectSubscribe(pushService.url + "/gone", link: link, .created)

        try await broker.put("d-1", state: .pickedByVolunteer)
        try await broker.put("d-1", state: .beingTakenTo)
        try await pushService.waitFor("both browsers are pushed the pick-up") { requests in
            requests.contains { $0.path == "/browser" } && requests.contains { $0.path == "/gone" }
        }
        try await waitUntil("the subscription its push service forgot is deleted") {
            try await storedEndpoints("d-1") == [pushService.url + "/browser"]
        }
        let push = try XCTUnwrap(pushes(to: "/browser").first)
        XCTAssertEqual(push.headers["content-encoding"], "aes128gcm")
        XCTAssertTrue(push.headers["authorization"]?.hasPrefix("vapid t=") ?? false, "\(push.headers)")
        XCTAssertNotNil(push.headers["ttl"])
        XCTAssertNotNil(push.headers["topic"])
        XCTAssertFalse(push.text.contains("d-1"), "the push service cannot read the donation")

        try await broker.put("d-1", state: .delivered)
        try await pushService.waitFor("the browser is pushed the delivery") { _ in self.pushes(to: "/browser").count == 2 }
        try await waitUntil("the ended donation's subscriptions are gone from the store") { try await storedEndpoints("d-1").isEmpty }
        XCTAssertEqual(pushes(to: "/gone").count, 1, "nothing more to a subscription its service forgot")

        // The link of the ended donation subscribes nothing more, and nothing more is pushed to its browser.
        try await expectSubscribe(pushService.url + "/browser", link: link, .unauthorized)
        try await broker.put("d-marker", state: .beingLookedFor)
        try await expectSubscribe(pushService.url + "/marker", link: try await watchLink("d-marker"), .created)
        try await broker.put("d-marker", state: .pickedByVolunteer)
        try await broker.put("d-marker", state: .beingTakenTo)
        try await pushService.waitFor("a later donation's push goes out") { $0.contains { $0.path == "/marker" } }
        XCTAssertEqual(pushes(to: "/browser").count, 2, "nothing pushed to the ended donation's browser")
    }

    // MARK: - Endpoints that are not host names

    func testAForgedHostOrAPortOfAnAllowedServiceIsRefused() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        let link = try await watchLink("d-1")
        let refused = [
            "https://127.0.0.1%00.push.apple.com/x", "https://127.0.0.1%2500.push.apple.com/x", "https://a%2Eb.push.apple.com/x",
            "https://web\t.push.apple.com/x", "https://web .push.apple.com/x", "https://web\n.push.apple.com/x",
            "https://evil.example/.push.apple.com/x", "https://evil.example\\.push.apple.com/x", "https://evil.example\\@web.push.apple.com/x",
            "https://fcm.googleapis.com:8443/x", "https://web.push.apple.com:80/x", "https://user@fcm.googleapis.com/x",
            "https://[::1].push.apple.com/x", "https://10.0.0.1/x", "https://-web.push.apple.com/x",
            "https://web..push.apple.com/x", "https://fcm.googleapis.com", "http://fcm.googleapis.com/x",
            "https://fcm.googleapis.com./x", "https://FCM.googleapis.com/x\u{0}",
        ]
        for endpoint in refused {
            let response = try await subscribe(endpoint, link: link)
            XCTAssertEqual(response.status, .forbidden, "\(endpoint.debugDescription): \(String(buffer: response.body ?? .init()))")
            XCTAssertFalse(response.error?.message.isEmpty ?? true, "\(endpoint.debugDescription) is told why")
        }
        try await expectStored("d-1", [], "none of them stored")
        for accepted in ["https://web.push.apple.com/QO", "https://fcm.googleapis.com/fcm/send/x", "https://fcm.googleapis.com:443/y"] {
            try await expectSubscribe(accepted, link: link, .created, accepted)
        }
    }

    // MARK: - One browser's failures are its own

    /// The TTLs the browser at `path` was pushed, in order: the pick-up's is about an hour, the delivery's a day.
    private func ttls(_ path: String) -> [Int] {
        pushes(to: path).compactMap { $0.headers["ttl"].flatMap { Int($0) } }
    }

    func testAFailingBrowserNeitherDelaysNorRepeatsAnothersPushesAndNothingFollowsTheEnd() async throws {
        try await broker.put("d-1", state: .beingLookedFor)
        let link = try await watchLink("d-1")
        try await expectSubscribe(pushService.url + "/browser", link: link, .created)
        try await expectSubscribe(pushService.url + "/failing", link: link, .created)

        try await broker.put("d-1", state: .pickedByVolunteer)
        try await broker.put("d-1", state: .beingTakenTo)
        try await pushService.waitFor("the working browser is pushed the pick-up") { _ in !self.ttls("/browser").isEmpty }
        try await broker.put("d-1", state: .delivered)
        try await pushService.waitFor("the working browser is pushed the delivery at once", within: .seconds(8)) { _ in
            self.ttls("/browser").contains { $0 > 3_600 }
        }
        try await waitUntil("the ended donation's subscriptions are gone from the store") { try await storedEndpoints("d-1").isEmpty }
        // The failing browser goes on failing: the working one hears nothing more, the failing one nothing older.
        try await Task.sleep(for: .seconds(6))
        let browser = ttls("/browser")
        XCTAssertEqual(browser.count, 2, "the pick-up once, then the delivery: \(browser)")
        XCTAssertTrue(browser.count == 2 && browser[0] <= 3_600 && browser[1] > 3_600, "\(browser)")
        let failing = ttls("/failing")
        if let end = failing.firstIndex(where: { $0 > 3_600 }) {
            XCTAssertTrue(failing[end...].allSatisfy { $0 > 3_600 }, "the pick-up was retried after the delivery: \(failing)")
        } else {
            XCTFail("the failing browser was never tried with the delivery: \(failing)")
        }
    }
}
