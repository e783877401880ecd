import BrokerClient
import BrokerHTTP
import BrokerProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// `POST /v1/owntracks`: the OwnTracks app in HTTP mode publishes like a WebSocket volunteer, with the same
/// checks, limits and errors. Payloads follow the examples of the OwnTracks JSON documentation.
final class OwnTracksTests: XCTestCase {
    private let volunteerID = "vol@example.org"
    private let donorID = "donor@example.org"
    private var live: LiveBroker!

    override func tearDown() async throws {
        try await live?.stop()
    }

    private func start(_ adjust: (inout BrokerConfiguration) -> Void = { _ in }) async throws {
        live = try await LiveBroker.start(adjust)
    }

    /// One POST as the app sends it: Basic auth with the e-mail as user and the token as password.
    private func post(
        _ body: String, user: String? = nil, token: String? = nil, authorization: String? = nil
    ) async throws -> TestClient.Response {
        let password: String
        if let token { password = token } else { password = try await LiveBroker.token(volunteerID) }
        let basic = "Basic " + Data("\(user ?? volunteerID):\(password)".utf8).base64EncodedString()
        var headers: HTTPFields = [.authorization: authorization ?? basic, .contentType: "application/json"]
        // The app also names the user and device in headers of its own; the broker does not need them.
        if let user = HTTPField.Name("X-Limit-U"), let device = HTTPField.Name("X-Limit-D") {
            headers[user] = "vol"
            headers[device] = "phone"
        }
        return try await live.request(.post, "/v1/owntracks", headers: headers, body: body)
    }

    private static func nowSeconds() -> Int64 { WallClock.system.now() / 1000 }

    /// The documented `location` example, at `metres` north of the donor's home and taken now.
    private func documentedLocation(metresFromHome metres: Double = 800, tst: Int64 = OwnTracksTests.nowSeconds()) -> (String, Position) {
        let point = position(metresFromHome: metres)
        let json = """
            {"_type":"location","BSSID":"b0:f2:8:45:94:33","SSID":"Home Wifi","acc":14,"alt":27,"batt":69,"bs":2,\
            "cog":270,"conn":"w","created_at":\(tst),"inregions":["home"],"lat":\(point.lat),"lon":\(point.lon),"m":1,\
            "t":"u","tid":"JJ","topic":"owntracks/vol/phone","tst":\(tst),"vac":2,"vel":36}
            """
        let expected = Position(lat: point.lat, lon: point.lon, accuracy: 14, speed: 10, heading: 270, timestamp: tst * 1000)
        return (json, expected)
    }

    private func assertAccepted(_ response: TestClient.Response, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? ByteBuffer()), file: file, line: line)
        XCTAssertEqual(String(buffer: response.body ?? ByteBuffer()), "[]", "OwnTracks expects a JSON array", file: file, line: line)
        XCTAssertEqual(response.headers[.contentType], "application/json; charset=utf-8", file: file, line: line)
    }

    private func assertRefused(
        _ response: TestClient.Response, _ status: HTTPResponse.Status, _ code: ErrorCode, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(response.status, status, String(buffer: response.body ?? ByteBuffer()), file: file, line: line)
        XCTAssertEqual(response.error?.code, code, file: file, line: line)
        XCTAssertFalse(response.error?.message.isEmpty ?? true, "the error says why", file: file, line: line)
    }

    /// A donor subscribed to d-1, with the subscription's reply read.
    private func watchingDonor() async throws -> BrokerConnection {
        let donor = try await live.connect(donorID)
        try await donor.send(.subscribe(.init(id: "s1", target: .donation("d-1"))))
        guard case .subscribed = try await donor.next() else { throw BrokerClientError("not subscribed") }
        return donor
    }

    // MARK: Accepted

    func testABatchReplayingFixesFromBeforeTheTripReachesNobodyButTheNextFreshFixDoes() async throws {
        // The app queued fixes while the broker refused its token; they arrive once the trip has begun.
        try await start { $0.publishBurst = 10 }
        try await live.put("d-1", state: .created)
        let queuedAt = Self.nowSeconds() - 180
        try await live.put("d-1", state: .beingLookedFor)
        let donor = try await watchingDonor()
        for minute in 0..<3 {
            let response = try await post(documentedLocation(metresFromHome: 2_000 - Double(minute) * 100, tst: queuedAt + Int64(minute) * 60).0)
            assertAccepted(response)
            XCTAssertEqual(response.headers[PublishOutcomeHeaders.tracking], "false")
            XCTAssertEqual(response.headers[PublishOutcomeHeaders.untrackedReason], "before-window")
        }
        XCTAssertEqual(live.metric(#"broker_positions_untracked_total{reason="before-window"}"#), 3)
        // Not live, and not for a donor who subscribes now with since: 0.
        guard case .presence = try await donor.next() else { return XCTFail("expected the volunteer's presence first") }
        try await donor.expectNothingPending()
        let later = try await live.connect(donorID)
        try await later.send(.subscribe(.init(id: "s2", target: .donation("d-1"), since: 0)))
        guard case .subscribed(let view) = try await later.next() else { return XCTFail("not subscribed") }
        XCTAssertNil(view.last)
        try await later.expectNothingPending()

        let (fresh, expected) = documentedLocation(metresFromHome: 700)
        let response = try await post(fresh)
        XCTAssertEqual(response.headers[PublishOutcomeHeaders.tracking], "true")
        XCTAssertNil(response.headers[PublishOutcomeHeaders.untrackedReason])
        guard case .position(let update) = try await donor.next() else { return XCTFail("the fresh fix did not arrive") }
        XCTAssertEqual(update.position, expected)
        await donor.close()
        await later.close()
    }

    func testADocumentedLocationReachesTheWatchingDonor() async throws {
        try await start()
        try await live.put("d-1", state: .beingLookedFor)
        let donor = try await watchingDonor()

        let (json, expected) = documentedLocation()
        // The user name is compared as an identity: case does not matter.
        assertAccepted(try await post(json, user: "Vol@Example.ORG"))

        guard case .presence(let presence) = try await donor.next() else { return XCTFail("no presence") }
        XCTAssertTrue(presence.online, "an OwnTracks location brings the volunteer online")
        guard case .position(let delivered) = try await donor.next() else { return XCTFail("no position") }
        XCTAssertEqual(delivered.channel, volunteerID)
        XCTAssertEqual(delivered.position.lat, expected.lat)
        XCTAssertEqual(delivered.position.lon, expected.lon)
        XCTAssertEqual(delivered.position.accuracy, 14)
        XCTAssertEqual(delivered.position.speed ?? -1, 10, accuracy: 1e-9, "vel is km/h; the broker speaks m/s")
        XCTAssertEqual(delivered.position.heading, 270)
        XCTAssertEqual(delivered.position.timestamp, expected.timestamp, "tst is seconds; the broker speaks milliseconds")
        XCTAssertEqual(live.metric("broker_positions_kept_total"), 1)

        // The same seq line as WebSocket publishes: a later WebSocket publish follows on.
        let volunteer = try await live.connect(volunteerID)
        let fix = position(metresFromHome: 500)
        let ack = try await volunteer.publish(fix)
        XCTAssertTrue(ack.tracking)
        guard case .position(let next) = try await donor.next() else { return XCTFail("no WebSocket position") }
        XCTAssertEqual(next.position, fix)
        XCTAssertEqual(next.seq, delivered.seq + 1)

        // Arrival works from OwnTracks positions too.
        let (near, _) = documentedLocation(metresFromHome: 60)
        assertAccepted(try await post(near))
        guard case .position = try await donor.next() else { return XCTFail("no position") }
        guard case .arrival(let arrival) = try await donor.next() else { return XCTFail("no arrival") }
        XCTAssertEqual(arrival.place, .home)
    }

    func testAPublishOverHTTPIsNotASocket() async throws {
        try await start()
        try await live.put("d-1", state: .beingLookedFor)
        assertAccepted(try await post(documentedLocation().0))
        XCTAssertEqual(live.broker.hub.connectionCount, 0, "no connection was opened or left behind")
        XCTAssertEqual(live.metric("broker_connections"), 0)
        XCTAssertTrue(live.broker.hub.mayConnect(volunteerID))
        // A donor who subscribes afterwards sees the volunteer online, with the position as `last`.
        let donor = try await live.connect(donorID)
        try await donor.send(.subscribe(.init(id: "s1", target: .donation("d-1"))))
        guard case .subscribed(let subscribed) = try await donor.next() else { return XCTFail("not subscribed") }
        XCTAssertEqual(subscribed.online, true)
        XCTAssertEqual(subscribed.last?.position.accuracy, 14)
    }

    func testAVolunteerWithNothingTrackableIsAcceptedButNotKept() async throws {
        try await start()
        try await live.put("d-1", state: .pickedByVolunteer)
        assertAccepted(try await post(documentedLocation().0))
        XCTAssertEqual(live.metric(#"broker_positions_untracked_total{reason="no-trackable-donation"}"#), 1)
        XCTAssertEqual(live.metric("broker_positions_kept_total"), 0)
    }

    func testOtherMessageTypesAreAcceptedAndIgnored() async throws {
        try await start()
        try await live.put("d-1", state: .beingLookedFor)
        let donor = try await watchingDonor()
        let now = Self.nowSeconds()
        let documented = [
            // A region was entered (its coordinates are far away, and old: it must not be taken for a fix).
            #"{"_type":"transition","wtst":1425042603,"lat":12.34,"lon":44.5,"tst":1427634603,"acc":130,"tid":"JP","event":"enter","desc":"my Indian restaurant","t":"c"}"#,
            // A region defined on the phone.
            #"{"_type":"waypoint","desc":"Home","lat":52.5163,"lon":13.3777,"rad":50,"tst":1400000000}"#,
            // The last will the app leaves when it disconnects.
            #"{"_type":"lwt","tst":\#(now)}"#,
            #"{"_type":"card","name":"Volunteer","tid":"JJ"}"#,
            #"{"_type":"status","android":{"hib":1,"bo":1,"loc":0,"ps":0,"wifi":1}}"#,
            #"{"_type":"encrypted","data":"c2VjcmV0"}"#,
        ]
        for body in documented {
            assertAccepted(try await post(body))
        }
        try await donor.expectNothingPending()
        XCTAssertEqual(live.metric("broker_positions_kept_total"), 0)
        XCTAssertEqual(live.metric(#"broker_positions_untracked_total{reason="no-trackable-donation"}"#), 0)
    }

    // MARK: Refused

    func testCredentialsAreChecked() async throws {
        try await start()
        try await live.put("d-1", state: .beingLookedFor)
        let body = documentedLocation().0

        let none = try await live.request(.post, "/v1/owntracks", headers: [.contentType: "application/json"], body: body)
        assertRefused(none, .unauthorized, .unauthorized)
        XCTAssertEqual(none.headers[.wwwAuthenticate], #"Basic realm="location-broker", charset="UTF-8""#)
        let token = try await LiveBroker.token(volunteerID)
        assertRefused(try await post(body, authorization: "Bearer \(token)"), .unauthorized, .unauthorized)
        assertRefused(try await post(body, authorization: "Basic not-base64!"), .unauthorized, .unauthorized)
        let noColon = "Basic " + Data("no-colon".utf8).base64EncodedString()
        assertRefused(try await post(body, authorization: noColon), .unauthorized, .unauthorized)

        let expired = try await post(body, token: try await LiveBroker.token(volunteerID, ttl: -3600))
        assertRefused(expired, .unauthorized, .unauthorized)
        XCTAssertEqual(expired.error?.message, "the token has expired")
        let forged = try await post(body, token: try await LiveBroker.token(volunteerID, secret: "another-secret-0123456789-0123456789"))
        assertRefused(forged, .unauthorized, .unauthorized)
        XCTAssertEqual(forged.error?.message, "the token's signature is not valid")

        // Someone else's token, or one's own token under someone else's name: refused alike.
        let other = try await LiveBroker.token("other@example.org")
        assertRefused(try await post(body, user: volunteerID, token: other), .unauthorized, .unauthorized)
        assertRefused(try await post(body, user: "other@example.org"), .unauthorized, .unauthorized)
        assertRefused(try await post(body, user: ""), .unauthorized, .unauthorized)

        XCTAssertEqual(live.metric(#"broker_rejections_total{code="unauthorized"}"#), 9)
        XCTAssertEqual(live.metric("broker_positions_kept_total"), 0, "nothing refused was published")
    }

    func testBodiesAreCheckedLikeWebSocketPublishes() async throws {
        try await start { $0.maxBodyBytes = 1024 }
        try await live.put("d-1", state: .beingLookedFor)
        let now = Self.nowSeconds()
        let home = LiveBroker.home

        let large = #"{"_type":"location","desc":"\#(String(repeating: "x", count: 2000))","lat":1,"lon":1,"tst":\#(now)}"#
        assertRefused(try await post(large), .contentTooLarge, .tooLarge)

        for body in ["not json", "[]", "{}", #"{"_type":5}"#, #"{"_type":"location","lat":1e999,"lon":1,"tst":\#(now)}"#] {
            assertRefused(try await post(body), .badRequest, .badRequest)
        }
        let invalid = [
            (#"{"_type":"location","lon":\#(home.lon),"tst":\#(now)}"#, "lat is required in a location message"),
            (#"{"_type":"location","lat":\#(home.lat),"lon":\#(home.lon)}"#, "tst is required in a location message"),
            (#"{"_type":"location","lat":"-34.6","lon":\#(home.lon),"tst":\#(now)}"#, "lat must be a number"),
            (#"{"_type":"location","lat":91,"lon":\#(home.lon),"tst":\#(now)}"#, "lat must be a number from -90 to 90"),
            (#"{"_type":"location","lat":\#(home.lat),"lon":-181,"tst":\#(now)}"#, "lon must be a number from -180 to 180"),
            (#"{"_type":"location","lat":\#(home.lat),"lon":\#(home.lon),"tst":0}"#, "tst must be seconds since the Unix epoch"),
            (
                #"{"_type":"location","lat":\#(home.lat),"lon":\#(home.lon),"tst":\#(now + 3600)}"#,
                "tst is more than 60 seconds in the future; check the phone's clock"
            ),
            (#"{"_type":"location","lat":\#(home.lat),"lon":\#(home.lon),"tst":\#(now),"vel":-1}"#, "vel must be a speed in km/h, 0 or more"),
            (#"{"_type":"location","lat":\#(home.lat),"lon":\#(home.lon),"tst":\#(now),"acc":-5}"#, "acc must be a number of metres, 0 or more"),
            (#"{"_type":"location","lat":\#(home.lat),"lon":\#(home.lon),"tst":\#(now),"cog":361}"#, "cog must be a number of degrees from 0 to 360"),
        ]
        for (body, message) in invalid {
            let response = try await post(body)
            assertRefused(response, .badRequest, .invalidPosition)
            XCTAssertEqual(response.error?.message, message, body)
        }
        XCTAssertEqual(live.metric(#"broker_rejections_total{code="invalid-position"}"#), Double(invalid.count))
        XCTAssertEqual(live.metric("broker_positions_kept_total"), 0)

        // The smallest location the apps send is enough; a course rounded up to 360 is north.
        assertAccepted(try await post(#"{"_type":"location","lat":\#(home.lat),"lon":\#(home.lon),"tst":\#(now),"cog":360}"#))
        XCTAssertEqual(live.metric("broker_positions_kept_total"), 1)
    }

    func testTheRateLimitIsTheVolunteersOwnAcrossHTTPAndWebSocket() async throws {
        try await start {
            $0.publishRate = 0.001
            $0.publishBurst = 2
        }
        try await live.put("d-1", state: .beingLookedFor)
        assertAccepted(try await post(documentedLocation(metresFromHome: 900).0))
        assertAccepted(try await post(documentedLocation(metresFromHome: 800).0))
        let limited = try await post(documentedLocation(metresFromHome: 700).0)
        assertRefused(limited, .tooManyRequests, .rateLimited)
        XCTAssertEqual(limited.error?.message.hasPrefix("publishing faster than"), true)

        // The bucket belongs to the volunteer: the WebSocket is limited too.
        let volunteer = try await live.connect(volunteerID)
        try await volunteer.send(.publish(.init(id: "p", position: position(metresFromHome: 600))))
        guard case .error(let error) = try await volunteer.next() else { return XCTFail("not limited") }
        XCTAssertEqual(error.code, .rateLimited)
        XCTAssertEqual(live.metric(#"broker_rejections_total{code="rate-limited"}"#), 2)
        XCTAssertEqual(live.metric("broker_positions_kept_total"), 2)
    }

    func testOnlyPOSTIsServed() async throws {
        try await start()
        let get = try await live.request(.get, "/v1/owntracks")
        XCTAssertNotEqual(get.status, .ok)
    }
}
