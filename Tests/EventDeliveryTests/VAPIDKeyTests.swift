import Crypto
import Foundation
import XCTest

@testable import EventDelivery

/// The VAPID key and its tokens: what a push service checks (RFC 8292), verified here with the public key only,
/// as the push service does.
final class VAPIDKeyTests: XCTestCase {
    static let now: Int64 = 1_790_000_000

    func testThePublicKeyIsTheUncompressedPointInBase64URL() throws {
        let key = VAPIDKey.generate()
        let point = try XCTUnwrap(Base64Text.urlDecoded(key.publicKeyBase64URL))
        XCTAssertEqual(point.count, 65)
        XCTAssertEqual(point.first, 0x04)
        XCTAssertFalse(key.publicKeyBase64URL.contains("="), "no padding: the page gives it to the browser as is")
        XCTAssertEqual(point, key.privateKey.publicKey.x963Representation)
    }

    func testTheTokenVerifiesWithThePublicKeyAndCarriesTheClaims() throws {
        let key = VAPIDKey.generate()
        let header = try key.authorization(
            endpoint: "https://fcm.googleapis.com/fcm/send/abc:def", subject: "mailto:ops@example.org",
            expiresAt: Self.now + 12 * 3600, now: Self.now)
        let token = try VerifiedToken(header: header, publicKey: key.publicKeyBase64URL)
        XCTAssertEqual(token.header as NSDictionary, ["typ": "JWT", "alg": "ES256"])
        XCTAssertEqual(token.claims as NSDictionary, ["aud": "https://fcm.googleapis.com", "exp": Self.now + 12 * 3600, "sub": "mailto:ops@example.org"])
    }

    func testATokenSignedByAnotherKeyDoesNotVerify() throws {
        let header = try VAPIDKey.generate().authorization(
            endpoint: "https://push.example/x", subject: "https://example.org/contact", expiresAt: Self.now + 60, now: Self.now)
        let forged = header.replacingOccurrences(of: #"k=[^ ]+$"#, with: "k=" + VAPIDKey.generate().publicKeyBase64URL, options: .regularExpression)
        XCTAssertThrowsError(try VerifiedToken(header: forged, publicKey: nil))
    }

    func testTheAudienceIsTheEndpointsOrigin() throws {
        let cases = [
            ("https://updates.push.services.mozilla.com/wpush/v2/gAAA?x=1", "https://updates.push.services.mozilla.com"),
            ("https://Web.Push.Apple.com:443/QOV", "https://web.push.apple.com"),
            ("https://push.example:8443/p", "https://push.example:8443"),
            ("http://127.0.0.1:9000/p", "http://127.0.0.1:9000"),
            ("http://[::1]:9000/p", "http://[::1]:9000"),
        ]
        let key = VAPIDKey.generate()
        for (endpoint, audience) in cases {
            let header = try key.authorization(endpoint: endpoint, subject: "mailto:a@b.c", expiresAt: Self.now + 60, now: Self.now)
            let token = try VerifiedToken(header: header, publicKey: key.publicKeyBase64URL)
            XCTAssertEqual(token.claims["aud"] as? String, audience, endpoint)
        }
        let fromURL = try key.authorization(
            endpoint: URL(string: "https://push.example/p")!, subject: "mailto:a@b.c", expiresAt: Self.now + 60, now: Self.now)
        XCTAssertEqual(try VerifiedToken(header: fromURL, publicKey: nil).claims["aud"] as? String, "https://push.example")
    }

    func testBadSubjectsEndpointsAndExpiriesAreRefused() {
        let key = VAPIDKey.generate()
        func refusal(_ endpoint: String = "https://push.example/p", subject: String = "mailto:ops@example.org", expiresIn: Int64 = 60)
            -> VAPIDKeyError?
        {
            do {
                _ = try key.authorization(endpoint: endpoint, subject: subject, expiresAt: Self.now + expiresIn, now: Self.now)
                return nil
            } catch {
                return error
            }
        }
        for subject in ["ops@example.org", "http://example.org", "mailto:", "https://", "", "tel:+3312345678"] {
            XCTAssertEqual(refusal(subject: subject), .badSubject, subject)
        }
        XCTAssertNil(refusal(subject: "MAILTO:ops@example.org"))
        XCTAssertEqual(refusal("push.example/p"), .badEndpoint)
        XCTAssertEqual(refusal("ftp://push.example/p"), .badEndpoint)
        XCTAssertEqual(refusal(expiresIn: 0), .expiryNotInFuture)
        XCTAssertEqual(refusal(expiresIn: -10), .expiryNotInFuture)
        XCTAssertEqual(refusal(expiresIn: 24 * 3600 + 1), .expiryTooFar)
        XCTAssertNil(refusal(expiresIn: 24 * 3600), "exactly 24 hours is allowed")
    }

    func testAPEMKeyReadsBackToTheSameKey() throws {
        let key = VAPIDKey.generate()
        let again = try VAPIDKey(pemRepresentation: key.pemRepresentation)
        XCTAssertEqual(again.publicKeyBase64URL, key.publicKeyBase64URL)
        // A test key made by `openssl ecparam -genkey -name prime256v1 -noout`, as an operator might bring one, and
        // its public point as openssl prints it.
        let sec1 = try VAPIDKey(
            pemRepresentation: """
                -----BEGIN EC PRIVATE KEY-----
                MHcCAQEEIK1MOMXqh3ijbwFDbin53D5OOY/Sv122vt8fwz3ORwqroAoGCCqGSM49
                AwEHoUQDQgAEkaWBwJD7TdVzFU9KwWerewdQQ07qIoZCAcS5CsfmTYNL8/sBC9/f
                viesFfU4jkrGC+vcSJUb4+MXYHms0ZWWxQ==
                -----END EC PRIVATE KEY-----
                """)
        XCTAssertEqual(sec1.publicKeyBase64URL, "BJGlgcCQ-03VcxVPSsFnq3sHUENO6iKGQgHEuQrH5k2DS_P7AQvf374nrBX1OI5Kxgvr3EiVG-PjF2B5rNGVlsU")
        XCTAssertThrowsError(try VAPIDKey(pemRepresentation: P384.Signing.PrivateKey().pemRepresentation)) { error in
            XCTAssertEqual(error as? VAPIDKeyError, .notAP256PrivateKey)
        }
        XCTAssertThrowsError(try VAPIDKey(pemRepresentation: "not a key"))
    }
}

/// A VAPID `Authorization` header taken apart and its JWT verified, as a push service does.
struct VerifiedToken {
    let header: [String: Any]
    let claims: [String: Any]

    struct Invalid: Error {}

    /// Reads `vapid t=<jwt>, k=<key>` and verifies the JWT's ES256 signature with `k`, which must equal `publicKey`
    /// when one is given.
    init(header authorization: String, publicKey: String?) throws {
        let parts = authorization.split(separator: " ")
        guard parts.count == 3, parts[0] == "vapid", parts[1].hasPrefix("t="), parts[1].hasSuffix(","), parts[2].hasPrefix("k=")
        else { throw Invalid() }
        let jwt = parts[1].dropFirst(2).dropLast()
        let key = String(parts[2].dropFirst(2))
        if let publicKey, key != publicKey { throw Invalid() }
        let pieces = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count == 3,
            let headerBytes = Base64Text.urlDecoded(pieces[0]), let claimBytes = Base64Text.urlDecoded(pieces[1]),
            let signatureBytes = Base64Text.urlDecoded(pieces[2]), signatureBytes.count == 64,
            let point = Base64Text.urlDecoded(key)
        else { throw Invalid() }
        let verifier = try P256.Signing.PublicKey(x963Representation: point)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        guard verifier.isValidSignature(signature, for: Data("\(pieces[0]).\(pieces[1])".utf8)) else { throw Invalid() }
        header = try XCTUnwrap(JSONSerialization.jsonObject(with: headerBytes) as? [String: Any])
        claims = try XCTUnwrap(JSONSerialization.jsonObject(with: claimBytes) as? [String: Any])
    }
}
