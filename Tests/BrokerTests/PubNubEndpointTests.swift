import BrokerClient
import BrokerProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// The PubNub-compatible endpoints against a live broker, as an attacker would try them: someone else's channel,
/// no token or a `uuid` that names the donor, a donation that ended or paused, too many held polls.
final class PubNubEndpointTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"

    private struct Answer {
        let status: HTTPResponse.Status
        let headers: [String: String]
        let json: Any
        let text: String
    }

    private func get(_ live: LiveBroker, _ path: String) async throws -> Answer {
        let response = try await live.request(.get, path)
        let text = String(buffer: response.body ?? ByteBuffer())
        let headers = Dictionary(response.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { first, _ in first })
        return Answer(status: response.status, headers: headers, json: (try? JSONSerialization.jsonObject(with: Data(text.utf8))) ?? NSNull(), text: text)
    }

    private func subscribe(_ live: LiveBroker, channel: String, tt: String, token: String?) async throws -> Answer {
        let auth = token.map { "&auth=\($0)" } ?? ""
        return try await get(live, "/v2/subscribe/sub-key/\(channel)/0?tt=\(tt)&tr=0&uuid=\(donorID)&pnsdk=test\(auth)")
    }

    /// The next timetoken of a subscribe's answer, and its messages' `d`.
    private func parsed(_ answer: Answer, file: StaticString = #filePath, line: UInt = #line) throws -> (tt: String, messages: [[String: Any]]) {
        XCTAssertEqual(answer.status, .ok, answer.text, file: file, line: line)
        let body = try XCTUnwrap(answer.json as? [String: Any], answer.text, file: file, line: line)
        let t = try XCTUnwrap(body["t"] as? [String: Any], file: file, line: line)
        let messages = try XCTUnwrap(body["m"] as? [[String: Any]], file: file, line: line)
        return (try XCTUnwrap(t["t"] as? String, file: file, line: line), messages.compactMap { $0["d"] as? [String: Any] })
    }

    /// Each message's own timetoken (`p.t`), in order.
    private static func ownTimetokens(_ answer: Answer) -> [String] {
        let messages = (answer.json as? [String: Any])?["m"] as? [[String: Any]] ?? []
        return messages.compactMap { ($0["p"] as? [String: Any])?["t"] as? String }
    }

    private func assertAccessDenied(_ answer: Answer, channel: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(answer.status, .forbidden, answer.text, file: file, line: line)
        let body = answer.json as? [String: Any]
        XCTAssertEqual(body?["status"] as? Int, 403, file: file, line: line)
        XCTAssertEqual(body?["error"] as? Bool, true, file: file, line: line)
        XCTAssertEqual(body?["service"] as? String, "Access Manager", file: file, line: line)
        XCTAssertEqual((body?["payload"] as? [String: Any])?["channels"] as? [String], [channel], file: file, line: line)
    }

    private func publish(_ live: LiveBroker, channel: String, _ message: String, token: String) async throws -> Answer {
        let encoded = message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return try await get(live, "/publish/pub-key/sub-key/0/\(channel)/0/\(encoded)?auth=\(token)&uuid=\(volunteerID)")
    }

    func testTheDonorReceivesAfterItsTimetokenAndIsDeniedOnceTheDonationIsDelivered() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 1 }) { live in
            try await live.put("d-1", state: .beingLookedFor)
            let donor = try await LiveBroker.token(donorID)
            let handshake = try parsed(try await subscribe(live, channel: volunteerID, tt: "0", token: donor))
            XCTAssertEqual(handshake.messages.count, 0, "a handshake gives the timetoken only")

            let volunteer = try await LiveBroker.token(volunteerID)
            let sent = try await publish(live, channel: volunteerID, #"{"latitude":-34.6,"longitude":-58.38,"ts":\#(WallClock.system.now() / 1000),"extra":"secret"}"#, token: volunteer)
            XCTAssertEqual(sent.status, .ok, sent.text)
            XCTAssertNotEqual(try XCTUnwrap((sent.json as? [Any])?[2] as? String), "0", "kept")

            let answer = try await subscribe(live, channel: volunteerID, tt: handshake.tt, token: donor)
            let polled = try parsed(answer)
            XCTAssertEqual(polled.tt, Self.ownTimetokens(answer).last, "the next timetoken is the seq of the last position given")
            XCTAssertGreaterThan(Int64(polled.tt) ?? 0, Int64(handshake.tt) ?? .max)
            XCTAssertEqual(polled.messages.count, 1)
            // In the volunteer's own shape: its names, its time in seconds; nothing else it sent.
            let message = try XCTUnwrap(polled.messages.first)
            XCTAssertEqual(Set(message.keys), ["latitude", "longitude", "ts"], "\(message)")
            XCTAssertEqual(message["latitude"] as? Double, -34.6)
            XCTAssertEqual(message["longitude"] as? Double, -58.38)
            XCTAssertEqual(try XCTUnwrap(message["ts"] as? Double), Double(WallClock.system.now()) / 1000, accuracy: 60)

            let empty = try parsed(try await subscribe(live, channel: volunteerID, tt: polled.tt, token: donor))
            XCTAssertEqual(empty.messages.count, 0, "nothing twice")
            XCTAssertEqual(empty.tt, polled.tt)

            try await live.put("d-1", state: .pickedByVolunteer)
            try await live.put("d-1", state: .beingTakenTo)
            try await live.put("d-1", state: .delivered)
            assertAccessDenied(try await subscribe(live, channel: volunteerID, tt: polled.tt, token: donor), channel: volunteerID)
            assertAccessDenied(try await subscribe(live, channel: volunteerID, tt: "1", token: donor), channel: volunteerID)
        }
    }

    func testAnotherDonorNoTokenAndAUUIDNamingTheDonorAreAllDenied() async throws {
        try await withLiveBroker { live in
            try await live.put("d-1", state: .beingTakenTo)
            let stranger = try await LiveBroker.token("mallory@example.org")
            assertAccessDenied(try await subscribe(live, channel: volunteerID, tt: "0", token: stranger), channel: volunteerID)
            assertAccessDenied(try await subscribe(live, channel: volunteerID, tt: "1", token: stranger), channel: volunteerID)
            // The same answer for a channel nobody publishes on: a refusal tells nothing about other people's donations.
            assertAccessDenied(try await subscribe(live, channel: "nobody@example.org", tt: "0", token: stranger), channel: "nobody@example.org")
            // The uuid is the SDK's device name, never an identity.
            let anonymous = try await subscribe(live, channel: volunteerID, tt: "1", token: nil)
            XCTAssertEqual(anonymous.status, .forbidden, anonymous.text)
            let forged = try await subscribe(live, channel: volunteerID, tt: "1", token: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJkb25vckBleGFtcGxlLm9yZyJ9.")
            XCTAssertEqual(forged.status, .forbidden, forged.text)
            // The volunteer may not watch their own channel either: only a donor may.
            let volunteer = try await LiveBroker.token(volunteerID)
            assertAccessDenied(try await subscribe(live, channel: volunteerID, tt: "0", token: volunteer), channel: volunteerID)
        }
    }

    func testAPublishOnAnotherChannelOrOutOfRangeIsRefusedAndReachesNobody() async throws {
        try await withLiveBroker { live in
            try await live.put("d-1", state: .beingTakenTo)
            let watcher = try await live.connect(donorID)
            try await watcher.send(.subscribe(.init(id: "s1", target: .donation("d-1"))))
            guard case .subscribed = try await watcher.next() else { return XCTFail("not subscribed") }
            // The donor tries to publish as the volunteer.
            let donor = try await LiveBroker.token(donorID)
            assertAccessDenied(try await publish(live, channel: volunteerID, #"{"lat":1,"lng":2}"#, token: donor), channel: volunteerID)
            let volunteer = try await LiveBroker.token(volunteerID)
            let outOfRange = try await publish(live, channel: volunteerID, #"{"lat":91,"lng":2,"timestamp":\#(WallClock.system.now())}"#, token: volunteer)
            XCTAssertEqual(outOfRange.status, .badRequest, outOfRange.text)
            XCTAssertEqual((outOfRange.json as? [String: Any])?["code"] as? String, "invalid-position")
            let twoSpellings = try await publish(live, channel: volunteerID, #"{"lat":1,"latitude":1,"lng":2}"#, token: volunteer)
            XCTAssertEqual(twoSpellings.status, .badRequest, twoSpellings.text)
            let future = try await publish(live, channel: volunteerID, #"{"lat":1,"lng":2,"timestamp":\#(WallClock.system.now() + 3_600_000)}"#, token: volunteer)
            XCTAssertEqual(future.status, .badRequest, future.text)
            let notAnObject = try await publish(live, channel: volunteerID, #""hello""#, token: volunteer)
            XCTAssertEqual(notAnObject.status, .badRequest, notAnObject.text)
            try await watcher.expectNothingPending()
            await watcher.close()
        }
    }

    func testADonorWhoseWindowOpenedLaterSeesNothingKeptBeforeItForAnotherDonor() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 1 }) { live in
            try await live.put("d-early", donor: "early@example.org", state: .beingLookedFor)
            let volunteer = try await LiveBroker.token(volunteerID)
            let before = try await publish(live, channel: volunteerID, #"{"lat":-34.5,"lng":-58.38,"timestamp":\#(WallClock.system.now())}"#, token: volunteer)
            XCTAssertEqual(before.headers["x-location-broker-tracking"], "true", before.text)
            try await Task.sleep(for: .milliseconds(2_100))  // past window_tolerance_ms (2 s)
            try await live.put("d-1", state: .beingLookedFor)
            let donor = try await LiveBroker.token(donorID)
            // A timetoken from before everything: the attacker asks for all the channel has kept.
            let polled = try parsed(try await subscribe(live, channel: volunteerID, tt: "1", token: donor))
            XCTAssertEqual(polled.messages.count, 0, "a fix kept for another donor before this window opened: \(polled.messages)")
            XCTAssertEqual(polled.tt, "1")
        }
    }

    func testATimetokenFromPubNubOrTheTimeEndpointStartsFromNowInsteadOfWaitingForever() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 30 }) { live in
            try await live.put("d-1", state: .beingLookedFor)
            let volunteer = try await LiveBroker.token(volunteerID)
            let kept = try await publish(live, channel: volunteerID, #"{"lat":-34.5,"lng":-58.38,"timestamp":\#(WallClock.system.now())}"#, token: volunteer)
            XCTAssertNotEqual(try XCTUnwrap((kept.json as? [Any])?[2] as? String), "0", "kept")
            let donor = try await LiveBroker.token(donorID)
            // The timetoken of the newest position the donor may see, in their donation's view.
            let keptTimetoken = try parsed(try await subscribe(live, channel: volunteerID, tt: "0", token: donor)).tt
            let time = try await get(live, "/time/0")
            let now = try XCTUnwrap(((time.json as? [Any])?.first as? NSNumber)?.int64Value)
            // Answered at once (not after the 30 s hold) with where the caller stands.
            let started = ContinuousClock.now
            let restarted = try parsed(try await subscribe(live, channel: volunteerID, tt: "\(now)", token: donor))
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
            XCTAssertEqual(restarted.messages.count, 0)
            XCTAssertEqual(restarted.tt, keptTimetoken)
            // And from there on, as after a handshake.
            let path = "/v2/subscribe/sub-key/\(volunteerID)/0?tt=\(restarted.tt)&auth=\(donor)"
            let next = Task { try await live.request(.get, path) }
            try await Task.sleep(for: .milliseconds(300))
            _ = try await publish(live, channel: volunteerID, #"{"lat":-34.51,"lng":-58.38,"timestamp":\#(WallClock.system.now())}"#, token: volunteer)
            let answer = try await next.value
            XCTAssertTrue(String(buffer: answer.body ?? ByteBuffer()).contains("-34.51"), String(buffer: answer.body ?? ByteBuffer()))
        }
    }

    func testAFixFromTheWebSocketReachesAPubNubDonorInTheFullShape() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 1 }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            let volunteer = try await live.connect(volunteerID)
            let fix = position(metresFromHome: 700)
            try await volunteer.publishKept(fix)
            let donor = try await LiveBroker.token(donorID)
            let answer = try await subscribe(live, channel: volunteerID, tt: "1", token: donor)
            let polled = try parsed(answer)
            XCTAssertEqual(Self.ownTimetokens(answer), [polled.tt], "the next timetoken is the message's own")
            let message = try XCTUnwrap(polled.messages.first)
            XCTAssertEqual(Set(message.keys), ["lat", "latitude", "lng", "lon", "longitude", "timestamp", "accuracy", "speed", "heading"], "\(message)")
            XCTAssertEqual(try XCTUnwrap(message["lat"] as? Double), fix.lat, accuracy: 1e-9)
            XCTAssertEqual(try XCTUnwrap(message["lng"] as? Double), fix.lon, accuracy: 1e-9)
            XCTAssertEqual((message["timestamp"] as? NSNumber)?.int64Value, fix.timestamp)
            await volunteer.close()
        }
    }

    func testAPauseShowsNothingAndItsTimetokenTellsNothing() async throws {
        try await withLiveBroker({ $0.pubNubHoldSeconds = 1 }) { live in
            try await live.put("d-1", state: .beingLookedFor)
            try await live.put("d-1", state: .pickedByVolunteer)
            let volunteer = try await LiveBroker.token(volunteerID)
            let sent = try await publish(live, channel: volunteerID, #"{"lat":-34.6,"lng":-58.38,"timestamp":\#(WallClock.system.now())}"#, token: volunteer)
            XCTAssertEqual(sent.status, .ok, sent.text)
            let donor = try await LiveBroker.token(donorID)
            let handshake = try parsed(try await subscribe(live, channel: volunteerID, tt: "0", token: donor))
            XCTAssertEqual(handshake.tt, "1", "the handshake does not reveal the volunteer's seq during a pause")
            let polled = try parsed(try await subscribe(live, channel: volunteerID, tt: "1", token: donor))
            XCTAssertEqual(polled.messages.count, 0)
            XCTAssertEqual(polled.tt, "1")
        }
    }

    func testHeldPollsAreBoundedPerIdentity() async throws {
        try await withLiveBroker({
            $0.pubNubHoldSeconds = 3
            $0.pubNubMaxPollsPerIdentity = 1
        }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            let donor = try await LiveBroker.token(donorID)
            let path = "/v2/subscribe/sub-key/\(volunteerID)/0?tt=1&auth=\(donor)"
            // Two polls at once: whichever comes first is held (nothing to answer) for 3 s, the other refused at once.
            let first = Task { try await live.request(.get, path) }
            let second = Task { try await live.request(.get, path) }
            let answers = [try await first.value, try await second.value]
            let texts = answers.map { String(buffer: $0.body ?? ByteBuffer()) }
            XCTAssertEqual(Set(answers.map(\.status)), [.ok, .tooManyRequests], "\(texts)")
            XCTAssertTrue(texts.contains { $0.hasSuffix(#""m":[]}"#) }, "the held poll ends empty: \(texts)")
            XCTAssertTrue(texts.contains { $0.contains(#""code":"limit-reached""#) }, "\(texts)")
        }
    }

    func testAShutdownAnswersAHeldPollInsteadOfHoldingItsTime() async throws {
        let live = try await LiveBroker.start { $0.pubNubHoldSeconds = 120 }
        do {
            try await live.put("d-1", state: .beingTakenTo)
            let donor = try await LiveBroker.token(donorID)
            let path = "/v2/subscribe/sub-key/\(volunteerID)/0?tt=1&auth=\(donor)"
            let port = live.port
            let held = Task { try await LiveBroker.request(port: port, .get, path) }
            try await Task.sleep(for: .milliseconds(500))
            let started = ContinuousClock.now
            let stopping = Task { try await live.stop() }
            let answer = try await held.value
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(30), "answered at the drain, not after the 120 s hold")
            XCTAssertEqual(answer.status, .ok)
            XCTAssertTrue(String(buffer: answer.body ?? ByteBuffer()).hasSuffix(#""m":[]}"#))
            try await stopping.value
        } catch {
            try? await live.stop()
            throw error
        }
    }

    func testGuessesSpendTheWebSocketsRefusalBudgets() async throws {
        try await withLiveBroker({
            $0.maxRefusedUpgradesPerMinute = 2
            $0.maxInvalidFramesPerMinute = 2
        }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            // Bad tokens are charged to the address: past its budget, no token is even read.
            for _ in 0..<2 {
                let refused = try await subscribe(live, channel: volunteerID, tt: "0", token: "not-a-token")
                XCTAssertEqual(refused.status, .forbidden, refused.text)
            }
            let donor = try await LiveBroker.token(donorID)
            let locked = try await subscribe(live, channel: volunteerID, tt: "0", token: donor)
            XCTAssertEqual(locked.status, .tooManyRequests, locked.text)
        }
        try await withLiveBroker({ $0.maxInvalidFramesPerMinute = 2 }) { live in
            try await live.put("d-1", state: .beingTakenTo)
            // Refused subscribes are charged to the identity: past its budget, it learns nothing more.
            let stranger = try await LiveBroker.token("mallory@example.org")
            for channel in ["a@example.org", "b@example.org"] {
                let refused = try await subscribe(live, channel: channel, tt: "0", token: stranger)
                XCTAssertEqual(refused.status, .forbidden, refused.text)
            }
            let locked = try await subscribe(live, channel: volunteerID, tt: "0", token: stranger)
            XCTAssertEqual(locked.status, .tooManyRequests, locked.text)
            // Another identity from the same address is not held back.
            let donor = try await LiveBroker.token(donorID)
            let other = try await subscribe(live, channel: volunteerID, tt: "0", token: donor)
            XCTAssertEqual(other.status, .ok, other.text)
        }
    }

    func testTimeLeaveAndHeartbeatAnswerInPubNubsFormat() async throws {
        try await withLiveBroker { live in
            let time = try await get(live, "/time/0")
            let timetoken = try XCTUnwrap(((time.json as? [Any])?.first as? NSNumber)?.int64Value)
            XCTAssertEqual(Double(timetoken) / 10_000, Double(WallClock.system.now()), accuracy: 60_000)
            let donor = try await LiveBroker.token(donorID)
            let leave = try await get(live, "/v2/presence/sub-key/sub-key/channel/\(volunteerID)/leave?auth=\(donor)&uuid=x")
            XCTAssertEqual(leave.status, .ok, leave.text)
            XCTAssertEqual((leave.json as? [String: Any])?["action"] as? String, "leave")
            let heartbeat = try await get(live, "/v2/presence/sub-key/sub-key/channel/\(volunteerID)/heartbeat?auth=\(donor)&heartbeat=300")
            XCTAssertEqual(heartbeat.status, .ok, heartbeat.text)
            let anonymous = try await get(live, "/v2/presence/sub-key/sub-key/channel/\(volunteerID)/leave?uuid=x")
            XCTAssertEqual(anonymous.status, .forbidden, anonymous.text)
        }
    }
}
