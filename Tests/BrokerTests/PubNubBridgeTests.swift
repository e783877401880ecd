import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerAuth
@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// The PubNub bridge as a real app's day uses it: PubNub's subscribe envelope, several channels and presence
/// channels in one subscribe, a token that expires mid-trip, a poll woken by the hub, a client that goes mid-poll.
final class PubNubBridgeTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let otherVolunteerID = "vol2@example.org"
    private let donorID = "donor@example.org"

    private struct Answer: Sendable {
        let status: HTTPResponse.Status
        let text: String

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }

        var messages: [[String: Any]] { json["m"] as? [[String: Any]] ?? [] }
        var timetoken: String? { (json["t"] as? [String: Any])?["t"] as? String }
        var region: Int? { (json["t"] as? [String: Any])?["r"] as? Int }
        var refusedChannels: [String]? { (json["payload"] as? [String: Any])?["channels"] as? [String] }
    }

    private func subscribe(_ live: LiveBroker, _ channels: String, tt: String, token: String) async throws -> Answer {
        try await Self.subscribe(live, channels, tt: tt, token: token)
    }

    private static func subscribe(_ live: LiveBroker, _ channels: String, tt: String, token: String) async throws -> Answer {
        let response = try await live.request(.get, "/v2/subscribe/sub-key/\(channels)/0?tt=\(tt)&tr=1&uuid=device&auth=\(token)")
        return Answer(status: response.status, text: String(buffer: response.body ?? ByteBuffer()))
    }

    @discardableResult
    private func publish(_ live: LiveBroker, as volunteer: String, lat: Double) async throws -> String {
        let token = try await LiveBroker.token(volunteer)
        let message = #"{"lat":\#(lat),"lng":-58.38,"timestamp":\#(WallClock.system.now())}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = try await live.request(.get, "/publish/pub-key/sub-key/0/\(volunteer)/0/\(message)?auth=\(token)")
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? ByteBuffer()))
        return String(buffer: response.body ?? ByteBuffer())
    }

    func testAPlainMessageCarriesNoTypeAndEveryTimetokenNamesOneRegion() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 2 }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            let donor = try await LiveBroker.token(donorID)
            let handshake = try await subscribe(live, volunteerID, tt: "0", token: donor)
            XCTAssertEqual(handshake.status, .ok, handshake.text)
            try await publish(live, as: volunteerID, lat: -34.6)
            let polled = try await subscribe(live, volunteerID, tt: try XCTUnwrap(handshake.timetoken), token: donor)
            let region = try XCTUnwrap(polled.region, polled.text)
            XCTAssertNotEqual(region, 0, "PubNub's service always names a region: \(polled.text)")
            XCTAssertEqual(handshake.region, region)
            let message = try XCTUnwrap(polled.messages.first, polled.text)
            XCTAssertNil(message["e"], "a plain message leaves `e` out; SDKs route one with `e` to other listeners: \(polled.text)")
            XCTAssertEqual((message["p"] as? [String: Any])?["r"] as? Int, region, "the message's region is the answer's: \(polled.text)")
        }
    }

    func testTwoChannelsInOneSubscribeAreEachGatedOnTheirOwn() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 2 }) { live in
            try await live.put("d-1", volunteer: volunteerID, state: .beingTakenTo)
            try await live.put("d-2", volunteer: otherVolunteerID, state: .beingLookedFor)
            try await live.put("d-3", donor: "someone@example.org", volunteer: "vol3@example.org", state: .beingTakenTo)
            let donor = try await LiveBroker.token(donorID)
            let both = "\(volunteerID),\(otherVolunteerID)"

            // With a channel the donor may not watch, the whole subscribe is refused, naming that channel only.
            let nosy = try await subscribe(live, "\(both),vol3@example.org", tt: "0", token: donor)
            XCTAssertEqual(nosy.status, .forbidden, nosy.text)
            XCTAssertEqual(nosy.json["service"] as? String, "Access Manager", nosy.text)
            XCTAssertEqual(nosy.refusedChannels, ["vol3@example.org"], nosy.text)

            let handshake = try await subscribe(live, both, tt: "0", token: donor)
            XCTAssertEqual(handshake.status, .ok, handshake.text)
            try await publish(live, as: volunteerID, lat: -34.61)
            try await publish(live, as: otherVolunteerID, lat: -34.62)
            var received: [String: [Double]] = [:]
            var timetoken = try XCTUnwrap(handshake.timetoken)
            let deadline = ContinuousClock.now + .seconds(20)
            while received.values.map(\.count).reduce(0, +) < 2 && ContinuousClock.now < deadline {
                let polled = try await subscribe(live, both, tt: timetoken, token: donor)
                XCTAssertEqual(polled.status, .ok, polled.text)
                for message in polled.messages {
                    let channel = try XCTUnwrap(message["c"] as? String)
                    received[channel, default: []].append(try XCTUnwrap((message["d"] as? [String: Any])?["lat"] as? Double))
                }
                timetoken = try XCTUnwrap(polled.timetoken)
            }
            XCTAssertEqual(received, [volunteerID: [-34.61], otherVolunteerID: [-34.62]])
            // From the last timetoken, nothing again.
            let again = try await subscribe(live, both, tt: timetoken, token: donor)
            XCTAssertEqual(again.messages.count, 0, again.text)
        }
    }

    func testPresenceChannelsNeverFailTheSubscribe() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 2 }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            let donor = try await LiveBroker.token(donorID)
            let channels = "\(volunteerID),\(volunteerID)-pnpres"
            let handshake = try await subscribe(live, channels, tt: "0", token: donor)
            XCTAssertEqual(handshake.status, .ok, handshake.text)
            try await publish(live, as: volunteerID, lat: -34.63)
            let polled = try await subscribe(live, channels, tt: try XCTUnwrap(handshake.timetoken), token: donor)
            XCTAssertEqual(polled.messages.map { $0["c"] as? String }, [volunteerID], polled.text)
            // Presence alone: nothing to watch, held and answered empty, never refused.
            let presenceOnly = try await subscribe(live, "\(volunteerID)-pnpres", tt: "0", token: donor)
            XCTAssertEqual(presenceOnly.status, .ok, presenceOnly.text)
        }
    }

    func testAHeldPollKeepsItsTokenExactlyAsLongAsANewRequestWouldThenAsksForANewOne() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 4 }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            // `exp` passed already, but within the leeway every request gets: valid for 5 to 6 s more.
            let now = WallClock.system.now() / 1000
            let secondsLeft: Int64 = 6
            let donor = try await TokenVerifier.mintHS256(
                secret: LiveBroker.jwtSecret, identity: donorID, ttlSeconds: 60, now: now - 60 - TokenLeeway.seconds + secondsLeft)
            let handshake = try await subscribe(live, volunteerID, tt: "0", token: donor)
            XCTAssertEqual(handshake.status, .ok, "a new request within the leeway is served: \(handshake.text)")
            let held = try await subscribe(live, volunteerID, tt: try XCTUnwrap(handshake.timetoken), token: donor)
            XCTAssertEqual(held.status, .ok, "a held poll within the same leeway is held too: \(held.text)")

            // Held across the end of the leeway: refused as a token is, naming no channel, so the app renews
            // its token rather than concluding that the donation ended.
            let cut = try await subscribe(live, volunteerID, tt: try XCTUnwrap(handshake.timetoken), token: donor)
            let afterwards = try await subscribe(live, volunteerID, tt: try XCTUnwrap(handshake.timetoken), token: donor)
            for refused in [cut, afterwards] {
                XCTAssertEqual(refused.status, .forbidden, refused.text)
                XCTAssertEqual(refused.json["code"] as? String, "unauthorized", refused.text)
                XCTAssertNil(refused.refusedChannels, "a token's refusal names no channel: \(refused.text)")
            }
            // While the donation's own end names its channel.
            let renewed = try await LiveBroker.token(donorID)
            try await live.put("d-1", state: .delivered)
            let ended = try await subscribe(live, volunteerID, tt: try XCTUnwrap(handshake.timetoken), token: renewed)
            XCTAssertEqual(ended.status, .forbidden, ended.text)
            XCTAssertEqual(ended.refusedChannels, [volunteerID], ended.text)
        }
    }

    func testAHeldPollIsAnsweredWhenThePositionIsKeptNotAtItsNextLook() async throws {
        try await withLiveBroker({
            $0.pubNubHoldSeconds = 30
            $0.publishRate = 100
            $0.publishBurst = 100
        }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            let donor = try await LiveBroker.token(donorID)
            let handshake = try await subscribe(live, volunteerID, tt: "0", token: donor)
            var timetoken = try XCTUnwrap(handshake.timetoken)
            var delays: [Duration] = []
            for index in 0..<7 {
                let held = Task { [timetoken, volunteerID] in try await Self.subscribe(live, volunteerID, tt: timetoken, token: donor) }
                // The poll is parked before the position is kept.
                try await Task.sleep(for: .milliseconds(300))
                let published = ContinuousClock.now
                try await publish(live, as: volunteerID, lat: -34.6 - Double(index) / 1000)
                let answer = try await held.value
                delays.append(ContinuousClock.now - published)
                XCTAssertEqual(answer.messages.count, 1, answer.text)
                timetoken = try XCTUnwrap(answer.timetoken)
            }
            // A poll that looked every 200 ms answered 100 ms late in the median; woken by the hub, it answers as
            // fast as the publish's own round trip.
            let median = delays.sorted()[delays.count / 2]
            XCTAssertLessThan(median, .milliseconds(40), "delays from publish to answer: \(delays)")
        }
    }

    func testAClientThatGoesMidPollFreesItsSlotAtOnce() async throws {
        try await withLiveBroker({
            $0.pubNubHoldSeconds = 60
            $0.pubNubMaxPollsPerIdentity = 1
        }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            let donor = try await LiveBroker.token(donorID)
            let handshake = try await subscribe(live, volunteerID, tt: "0", token: donor)
            let timetoken = try XCTUnwrap(handshake.timetoken)
            let path = "/v2/subscribe/sub-key/\(volunteerID)/0?tt=\(timetoken)&auth=\(donor)"
            // An app sent to the background: its poll is held, then its socket closes.
            let abandoned = try await RawSocket.connect(port: live.port)
            try await abandoned.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try await Task.sleep(for: .milliseconds(500))
            abandoned.shutdownOutput()
            try await Task.sleep(for: .milliseconds(300))
            // Back in the foreground: its one slot is free, so the new poll is held and gets the next position.
            let next = Task { [volunteerID] in try await Self.subscribe(live, volunteerID, tt: timetoken, token: donor) }
            try await Task.sleep(for: .milliseconds(300))
            try await publish(live, as: volunteerID, lat: -34.64)
            let answer = try await next.value
            XCTAssertEqual(answer.status, .ok, "the abandoned poll still held the slot: \(answer.text)")
            XCTAssertEqual(answer.messages.count, 1, answer.text)
        }
    }
}

/// The bridge on a cluster: a donor's SDK on one node, the volunteer's on another.
final class PubNubClusterTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"

    func testASubscribeOnOneNodeReceivesWhatIsPublishedOnAnother() async throws {
        let store = try await PostgresServer.shared().makeDatabase()
        let a = try await startNode("a", store: store)
        let b = try await startNode("b", store: store)
        try await ClusterFixture.put("d-1", on: a, donor: donorID, volunteer: volunteerID, state: .beingTakenTo)
        let donor = try await LiveBroker.token(donorID)
        let volunteerID = self.volunteerID
        @Sendable func subscribe(tt: String) async throws -> (status: HTTPResponse.Status, text: String) {
            let response = try await LiveBroker.request(port: b.port, .get, "/v2/subscribe/sub-key/\(volunteerID)/0?tt=\(tt)&auth=\(donor)")
            return (response.status, String(buffer: response.body ?? ByteBuffer()))
        }
        func json(_ text: String) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        // Node b hears of the donation through the bus, shortly.
        var handshake = try await subscribe(tt: "0")
        let deadline = ContinuousClock.now + .seconds(10)
        while handshake.status != .ok && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            handshake = try await subscribe(tt: "0")
        }
        XCTAssertEqual(handshake.status, .ok, handshake.text)
        let timetoken = try XCTUnwrap((json(handshake.text)["t"] as? [String: Any])?["t"] as? String, handshake.text)

        let held = Task { try await subscribe(tt: timetoken) }
        try await Task.sleep(for: .milliseconds(1_000))
        let volunteer = try await LiveBroker.token(volunteerID)
        let message = #"{"lat":-34.65,"lng":-58.38,"timestamp":\#(WallClock.system.now())}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let sent = try await LiveBroker.request(port: a.port, .get, "/publish/pub-key/sub-key/0/\(volunteerID)/0/\(message)?auth=\(volunteer)")
        XCTAssertEqual(sent.status, .ok, String(buffer: sent.body ?? ByteBuffer()))
        let answer = try await held.value
        XCTAssertEqual(answer.status, .ok, answer.text)
        let messages = json(answer.text)["m"] as? [[String: Any]] ?? []
        XCTAssertEqual(messages.compactMap { ($0["d"] as? [String: Any])?["lat"] as? Double }, [-34.65], answer.text)
    }
}
