import BrokerClient
import BrokerProtocol
import Foundation
import HTTPTypes
import JWTKit
import NIOCore
import XCTest

@testable import BrokerAuth
@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// Watch links (`POST /v1/donations/{id}/watch-token`): a link is good for watching one donation, in the
/// incarnation it was made for, and nothing else. Every test here tries to make a link do more.
final class WatchLinkTests: XCTestCase {
    private var live: LiveBroker!
    private static let donor = "donor@example.org"

    override func setUp() async throws {
        live = try await LiveBroker.start()
        try await live.put("d-1", donor: Self.donor, volunteer: "vol@example.org", state: .beingLookedFor)
        // Another donation of the same donor, trackable too, with another volunteer.
        try await live.put("d-2", donor: Self.donor, volunteer: "other-vol@example.org", state: .beingLookedFor)
    }

    override func tearDown() async throws {
        try await live.stop()
    }

    // MARK: Helpers

    private static let upgrade: HTTPFields = [
        .connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==",
    ]

    /// Asks the backend API for a watch link and checks that it was made.
    private func mint(_ id: String, file: StaticString = #filePath, line: UInt = #line) async throws -> WatchLink {
        let response = try await live.backend(.post, "/v1/donations/\(id)/watch-token")
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? ByteBuffer()), file: file, line: line)
        return try JSONDecoder().decode(WatchLink.self, from: Data(buffer: response.body ?? ByteBuffer()))
    }

    /// Opens a socket with a watch link and reads the welcome.
    private func open(_ link: WatchLink) async throws -> BrokerConnection {
        let connection = try await BrokerConnection.connect(url: live.webSocketURL, token: link.token)
        guard case .welcome = try await connection.next() else { throw BrokerClientError("no welcome") }
        return connection
    }

    /// What `GET /v1/ws` answers a WebSocket upgrade with `token`.
    private func upgradeRefusal(_ token: String) async throws -> (HTTPResponse.Status, BrokerError?) {
        var headers = Self.upgrade
        headers[.authorization] = "Bearer \(token)"
        let response = try await live.request(.get, "/v1/ws", headers: headers)
        return (response.status, response.error)
    }

    private func subscribe(_ connection: BrokerConnection, _ target: ClientFrame.Target, id: String = "s") async throws -> ServerFrame {
        try await connection.send(.subscribe(.init(id: id, target: target)))
        return try await connection.next()
    }

    private func assertRefused(
        _ frame: ServerFrame, _ code: ErrorCode, re: String? = "s", file: StaticString = #filePath, line: UInt = #line
    ) {
        guard case .error(let error) = frame else { return XCTFail("expected \(code.rawValue), got \(frame)", file: file, line: line) }
        XCTAssertEqual(error.code, code, error.message, file: file, line: line)
        XCTAssertEqual(error.re, re, file: file, line: line)
    }

    private func assertSubscribed(_ frame: ServerFrame, to id: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .subscribed(let subscribed) = frame else { return XCTFail("expected subscribed, got \(frame)", file: file, line: line) }
        XCTAssertEqual(subscribed.donation, id, file: file, line: line)
    }

    /// Reads frames until one matches, skipping presence and the like; fails after a few.
    private func next(_ connection: BrokerConnection, where matches: (ServerFrame) -> Bool) async throws -> ServerFrame {
        for _ in 0..<8 {
            let frame = try await connection.next()
            if matches(frame) { return frame }
        }
        throw BrokerClientError("the expected frame did not come")
    }

    // MARK: What a link is for

    func testAWatchLinkWatchesItsDonationAndSaysWhereItLeads() async throws {
        let before = WallClock.system.now()
        let link = try await mint("d-1")
        XCTAssertEqual(link.url, "/track/d-1#token=\(link.token)")
        XCTAssertEqual(Double(link.expiresAt - before), 86_400_000, accuracy: 5_000, "24 hours by default")
        XCTAssertEqual(live.metric("broker_watch_tokens_issued_total"), 1)

        let watcher = try await BrokerConnection.connect(url: live.webSocketURL + "?token=\(link.token)", token: nil)
        guard case .welcome(let welcome) = try await watcher.next() else { return XCTFail("no welcome") }
        XCTAssertEqual(welcome.identity, "watch-link d-1", "the link is nobody's identity")
        assertSubscribed(try await subscribe(watcher, .donation("d-1")), to: "d-1")

        let volunteer = try await live.connect("vol@example.org")
        let fix = try await volunteer.publishKept(position(metresFromHome: 900))
        let delivered = try await next(watcher) { if case .position = $0 { true } else { false } }
        guard case .position(let update) = delivered else { return XCTFail() }
        XCTAssertEqual(update.position, fix)
    }

    func testTheLifetimeOfALinkIsConfigurable() async throws {
        try await live.stop()
        live = try await LiveBroker.start { $0.watchTokenTTLSeconds = 600 }
        try await live.put("d-1", donor: Self.donor, volunteer: "vol@example.org", state: .beingLookedFor)
        let before = WallClock.system.now()
        let link = try await mint("d-1")
        XCTAssertEqual(Double(link.expiresAt - before), 600_000, accuracy: 5_000)
    }

    func testAnExpiredLinkIsRefused() async throws {
        let watchable = try await live.broker.donations.watchable(id: "d-1")
        let stored = try XCTUnwrap(watchable)
        let verifier = await WatchTokenVerifier(backendKey: LiveBroker.backendKey, ttlSeconds: 3600) { _ in stored }
        let now = Int64(Date().timeIntervalSince1970)
        let (old, _) = try await verifier.mint(for: stored, now: now - 3700)
        let (status, error) = try await upgradeRefusal(old)
        XCTAssertEqual(status, .unauthorized)
        XCTAssertEqual(error, BrokerError(.unauthorized, "the watch link has expired; ask for a new one"))
        let (fresh, _) = try await verifier.mint(for: stored, now: now)
        _ = try await open(WatchLink(token: fresh, expiresAt: 0, url: ""))
    }

    // MARK: What a link cannot do

    func testAFrameNIOCannotReadOnAWatchLinkIsAnsweredOnceWithItsCodeThenTheSocketClosed() async throws {
        // A watch link is upgraded by NIO's upgrader, not by hand: its pipeline must answer the decoder's errors
        // as the hand-made one does, once (NIO's automatic error handling is off; the broker's handler answers).
        let link = try await mint("d-1")
        let socket = try await RawWebSocket.connect(port: live.port, token: link.token)
        let welcome = try await socket.readFrame()
        XCTAssertEqual(welcome?.opcode, 0x1, "the welcome")
        // A fragmented ping: control frames cannot be fragmented (RFC 6455 §5.5), NIO's decoder refuses it.
        try await socket.sendFrame(opcode: 0x9, [1, 2, 3], fin: false)
        let answer = try await socket.readFrame()
        XCTAssertEqual(answer?.close?.code, 1002)
        XCTAssertEqual(answer?.payload.count, 2, "the code alone, as NIO's WebSocketProtocolErrorHandler writes it")
        let after = try await socket.readFrame(timeout: .seconds(2))
        XCTAssertNil(after, "one close frame, then the socket is closed")
        XCTAssertEqual(live.metric(#"broker_frames_in_total{type="invalid"}"#), 1, "counted once")
    }

    func testAWatchLinkCannotPublish() async throws {
        let watcher = try await open(try await mint("d-1"))
        try await watcher.send(.publish(.init(id: "p1", position: position(metresFromHome: 100))))
        assertRefused(try await watcher.next(), .watchOnly, re: "p1")
        // Not on the volunteer's channel either, nor over OwnTracks, where the link is no client token.
        try await watcher.send(.publish(.init(id: "p2", channel: "vol@example.org", position: position(metresFromHome: 100))))
        assertRefused(try await watcher.next(), .watchOnly, re: "p2")
        XCTAssertEqual(live.metric(#"broker_rejections_total{code="watch-only"}"#), 2)
    }

    func testAWatchLinkCannotPublishOverOwnTracks() async throws {
        let link = try await mint("d-1")
        let body = #"{"_type":"location","lat":-34.6,"lon":-58.38,"tst":\#(WallClock.system.now() / 1000)}"#
        for user in [Self.donor, "vol@example.org", "watch-link d-1"] {
            let basic = "Basic " + Data("\(user):\(link.token)".utf8).base64EncodedString()
            let response = try await live.request(.post, "/v1/owntracks", headers: [.authorization: basic, .contentType: "application/json"], body: body)
            XCTAssertEqual(response.status, .unauthorized, user)
        }
    }

    func testAWatchLinkCannotWatchAnotherDonationOfTheSameDonor() async throws {
        let watcher = try await open(try await mint("d-1"))
        assertRefused(try await subscribe(watcher, .donation("d-2")), .watchOnly)
        assertRefused(try await subscribe(watcher, .donation("d-404")), .watchOnly)
        // The donor's own token may watch d-2: the refusal is the link's, not the donation's.
        let donor = try await live.connect(Self.donor)
        assertSubscribed(try await subscribe(donor, .donation("d-2")), to: "d-2")
    }

    func testAWatchLinkCannotSubscribeByChannel() async throws {
        let watcher = try await open(try await mint("d-1"))
        assertRefused(try await subscribe(watcher, .channel("vol@example.org")), .watchOnly)
        assertRefused(try await subscribe(watcher, .channel("other-vol@example.org")), .watchOnly)
        // The link's own identity is no channel: no frame can even name it.
        let donor = try await live.connect(Self.donor)
        assertRefused(try await subscribe(donor, .channel("watch-link d-1")), .badRequest)
    }

    func testAWatchLinkDoesNotCountAsItsDonorsConnections() async throws {
        try await live.stop()
        live = try await LiveBroker.start { $0.maxConnectionsPerIdentity = 1 }
        try await live.put("d-1", donor: Self.donor, volunteer: "vol@example.org", state: .beingLookedFor)
        let link = try await mint("d-1")
        _ = try await live.connect(Self.donor)
        _ = try await open(link)
        // The link's own connections are limited like an identity's.
        let (status, error) = try await upgradeRefusal(link.token)
        XCTAssertEqual(status, .tooManyRequests)
        XCTAssertEqual(error?.code, .limitReached)
    }

    // MARK: A link dies with its donation

    /// Subscribes a link to d-1, ends d-1 with `end`, and checks that the link is revoked and then opens nothing.
    private func assertTheLinkDies(
        reason: ServerFrame.UnsubscribeReason, file: StaticString = #filePath, line: UInt = #line, _ end: () async throws -> Void
    ) async throws {
        let link = try await mint("d-1")
        let watcher = try await open(link)
        assertSubscribed(try await subscribe(watcher, .donation("d-1")), to: "d-1", file: file, line: line)
        try await end()
        let revoked = try await next(watcher) { if case .unsubscribed = $0 { true } else { false } }
        guard case .unsubscribed(let unsubscribed) = revoked else { return XCTFail(file: file, line: line) }
        XCTAssertEqual(unsubscribed.reason, reason, file: file, line: line)
        // The open socket can no longer subscribe, and the link opens no new socket.
        assertRefused(try await subscribe(watcher, .donation("d-1")), .notFound, file: file, line: line)
        let (status, error) = try await upgradeRefusal(link.token)
        XCTAssertEqual(status, .unauthorized, file: file, line: line)
        // A deleted donation leaves no record: the broker cannot tell it from one a restore lost, and says both.
        let expected =
            reason == .deleted
            ? "this watch link no longer opens anything: the broker has no record of its donation (it ended and was removed, or the broker's data was restored from an earlier backup); ask for a new link"
            : "this watch link no longer opens anything: the donation it was made for has ended"
        XCTAssertEqual(error, BrokerError(.unauthorized, expected), file: file, line: line)
        // Nor can a new link be made for it.
        let again = try await live.backend(.post, "/v1/donations/d-1/watch-token")
        XCTAssertEqual(again.status, .notFound, file: file, line: line)
    }

    func testAWatchLinkOpensNothingAfterDelivered() async throws {
        try await assertTheLinkDies(reason: .delivered) {
            try await live.put("d-1", state: .pickedByVolunteer)
            try await live.put("d-1", state: .beingTakenTo)
            try await live.put("d-1", state: .delivered)
        }
    }

    func testAWatchLinkOpensNothingAfterCancelled() async throws {
        try await assertTheLinkDies(reason: .cancelled) {
            try await live.put("d-1", state: .cancelled)
        }
    }

    func testAWatchLinkOpensNothingAfterDelete() async throws {
        try await assertTheLinkDies(reason: .deleted) {
            let deleted = try await live.backend(.delete, "/v1/donations/d-1")
            XCTAssertEqual(deleted.status, .noContent)
        }
    }

    func testAWatchLinkDoesNotOpenANewDonationThatReusesTheID() async throws {
        let link = try await mint("d-1")
        let watcher = try await open(link)
        let deleted = try await live.backend(.delete, "/v1/donations/d-1")
        XCTAssertEqual(deleted.status, .noContent)
        // The same id, the same donor, the same volunteer: a new donation all the same.
        try await live.put("d-1", donor: Self.donor, volunteer: "vol@example.org", state: .created)
        try await live.put("d-1", donor: Self.donor, volunteer: "vol@example.org", state: .beingLookedFor)
        let (status, error) = try await upgradeRefusal(link.token)
        XCTAssertEqual(status, .unauthorized)
        XCTAssertEqual(error?.code, .unauthorized)
        // A socket opened before the deletion cannot watch the new donation either.
        assertRefused(try await subscribe(watcher, .donation("d-1")), .notFound)
        // A link made now does.
        let fresh = try await open(try await mint("d-1"))
        assertSubscribed(try await subscribe(fresh, .donation("d-1")), to: "d-1")
    }

    func testAWatchLinkSurvivesARestartOfTheBroker() async throws {
        let link = try await mint("d-1")
        let database = live.database
        try await live.stop()
        live = try await LiveBroker.start(database: database)
        let watcher = try await open(link)
        assertSubscribed(try await subscribe(watcher, .donation("d-1")), to: "d-1")
    }

    // MARK: Who may make a link, and for what

    func testOnlyTheBackendMayMakeALink() async throws {
        let clientToken = try await LiveBroker.token(Self.donor)
        let link = try await mint("d-1")
        for (name, key) in [("client token", clientToken), ("watch link", link.token), ("wrong key", "wrong-key-wrong-key-wrong-key-wrong-key")] {
            let response = try await live.backend(.post, "/v1/donations/d-1/watch-token", key: key)
            XCTAssertEqual(response.status, .unauthorized, name)
            XCTAssertEqual(response.error?.code, .unauthorized, name)
        }
        let none = try await live.request(.post, "/v1/donations/d-1/watch-token")
        XCTAssertEqual(none.status, .unauthorized)
    }

    func testALinkForAnUnknownOrEndedDonationIs404() async throws {
        for id in ["d-404", "bad%20id"] {
            let response = try await live.backend(.post, "/v1/donations/\(id)/watch-token")
            XCTAssertEqual(response.status, .notFound, id)
            XCTAssertEqual(response.error?.code, .notFound, id)
        }
        let unknown = try await live.backend(.post, "/v1/donations/d-404/watch-token")
        XCTAssertEqual(unknown.error?.message, "no donation d-404 that can be watched: it does not exist or has ended")
        try await live.put("d-2", donor: Self.donor, volunteer: "other-vol@example.org", state: .cancelled)
        let ended = try await live.backend(.post, "/v1/donations/d-2/watch-token")
        XCTAssertEqual(ended.status, .notFound)
        // A donation that has not started yet may get a link: it opens once the trip starts.
        try await live.put("d-3", donor: Self.donor, volunteer: nil, state: .created)
        let early = try await open(try await mint("d-3"))
        assertRefused(try await subscribe(early, .donation("d-3")), .notFound)
    }

    // MARK: A link says nothing of its donor

    /// The claims of a link as anyone who sees it can read them: base64url, no key needed.
    private func readableClaims(of token: String) throws -> String {
        let payload = String(try XCTUnwrap(token.split(separator: ".").dropFirst().first))
        let data = try XCTUnwrap(Base64URL.decode(Array(payload.utf8)))
        return String(decoding: data, as: UTF8.self)
    }

    func testALinkDoesNotCarryTheDonorsEmailAndTwoLinksShareNothingOfTheDonor() async throws {
        let first = try await mint("d-1")
        let second = try await mint("d-2")
        for link in [first, second] {
            let claims = try readableClaims(of: link.token).lowercased()
            XCTAssertFalse(claims.contains("donor"), "the link names the donor: \(claims)")
            XCTAssertFalse(claims.contains("example.org"), "the link names the donor's domain: \(claims)")
            XCTAssertFalse(claims.contains("\"sub\""), "the link has a subject: \(claims)")
        }
        struct Donor: Decodable { let dnr: String }
        let firstDonor = try JSONDecoder().decode(Donor.self, from: Data(try readableClaims(of: first.token).utf8)).dnr
        let secondDonor = try JSONDecoder().decode(Donor.self, from: Data(try readableClaims(of: second.token).utf8)).dnr
        XCTAssertNotEqual(firstDonor, secondDonor, "two links of one donor cannot be told to be the same person's")
        XCTAssertEqual(firstDonor.count, 32)
        // Still the donor's: the link opens its donation.
        let watcher = try await open(first)
        assertSubscribed(try await subscribe(watcher, .donation("d-1")), to: "d-1")
    }

    func testALinkWhoseDonorDigestIsNotTheDonationsDonorsOpensNothing() async throws {
        let link = try await mint("d-1")
        // Whoever holds the watch-link key, and writes another person into the digest, gets nothing.
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: WatchTokenVerifier.signingKey(backendKey: LiveBroker.backendKey)), digestAlgorithm: .sha256)
        var claims = try await keys.verify(link.token, as: WatchTokenClaims.self)
        let verifier = await WatchTokenVerifier(backendKey: LiveBroker.backendKey, ttlSeconds: 3600) { _ in nil }
        claims.dnr = verifier.donorDigest(donor: "mallory@example.org", donation: "d-1", incarnation: claims.inc)
        var header = JWTHeader()
        header.typ = WatchTokenClaims.headerType
        let forged = try await keys.sign(claims, header: header)
        let (status, error) = try await upgradeRefusal(forged)
        XCTAssertEqual(status, .unauthorized)
        XCTAssertEqual(error, BrokerError(.unauthorized, "this watch link no longer opens anything: the donation it was made for has ended"))
    }

    // MARK: Client tokens and watch links are never taken for each other

    func testAClientTokenIsNotAcceptedAsAWatchLink() async throws {
        // The donor's own token, marked as a watch link in its header: checked against the watch-link key, refused.
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(LiveBroker.jwtSecret.utf8)), digestAlgorithm: .sha256)
        let watchable = try await live.broker.donations.watchable(id: "d-1")
        let stored = try XCTUnwrap(watchable)
        let now = Int64(Date().timeIntervalSince1970)
        var header = JWTHeader()
        header.typ = WatchTokenClaims.headerType
        let claims = WatchTokenClaims(
            typ: WatchTokenClaims.type, aud: WatchTokenClaims.audience, dnr: "0123456789abcdef0123456789abcdef", don: "d-1", inc: try XCTUnwrap(stored.incarnation),
            iat: now, exp: now + 3600)
        let signedWithTheClientKey = try await keys.sign(claims, header: header)
        let (status, error) = try await upgradeRefusal(signedWithTheClientKey)
        XCTAssertEqual(status, .unauthorized)
        XCTAssertEqual(error, BrokerError(.unauthorized, "the watch link's signature is not valid"))
        // A plain client token marked as a watch link.
        let plain = try await keys.sign(TokenClaims(expiresAt: now + 3600, strings: ["sub": Self.donor]), header: header)
        let (plainStatus, _) = try await upgradeRefusal(plain)
        XCTAssertEqual(plainStatus, .unauthorized)
        // A token signed with the watch-link key that is not a watch token (a client token's claims).
        let watchKeys = JWTKeyCollection()
        await watchKeys.add(hmac: HMACKey(key: WatchTokenVerifier.signingKey(backendKey: LiveBroker.backendKey)), digestAlgorithm: .sha256)
        let clientClaimsWithTheWatchKey = try await watchKeys.sign(TokenClaims(expiresAt: now + 3600, strings: ["sub": Self.donor]), header: header)
        let (otherStatus, otherError) = try await upgradeRefusal(clientClaimsWithTheWatchKey)
        XCTAssertEqual(otherStatus, .unauthorized)
        XCTAssertEqual(otherError, BrokerError(.unauthorized, "the watch link is not a token this broker made"))
    }

    func testAWatchLinkIsNotAcceptedAsAClientToken() async throws {
        let link = try await mint("d-1")
        // Stripped of its header mark, the link goes to the client-token verifier, which refuses it.
        let parts = link.token.split(separator: ".")
        let plainHeader = Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let unmarked = [plainHeader, String(parts[1]), String(parts[2])].joined(separator: ".")
        let (status, _) = try await upgradeRefusal(unmarked)
        XCTAssertEqual(status, .unauthorized)
        // The client-token verifier refuses a watch token's type even under its own key.
        let verifier = try await TokenVerifier(configuration: live.broker.configuration)
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(LiveBroker.jwtSecret.utf8)), digestAlgorithm: .sha256)
        let now = Int64(Date().timeIntervalSince1970)
        let typed = try await keys.sign(TokenClaims(expiresAt: now + 3600, strings: ["sub": Self.donor, "typ": WatchTokenClaims.type]))
        guard case .failure(let refusal) = verifier.verify(typed) else { return XCTFail("a token typed as a watch link was a client token") }
        XCTAssertEqual(refusal, BrokerError(.unauthorized, "a watch link is not a client token; it can only watch its donation"))
        let (typedStatus, typedError) = try await upgradeRefusal(typed)
        XCTAssertEqual(typedStatus, .unauthorized)
        XCTAssertEqual(typedError, refusal)
        // And the link is no backend key (testOnlyTheBackendMayMakeALink) nor an OwnTracks password
        // (testAWatchLinkCannotPublishOverOwnTracks).
    }
}
