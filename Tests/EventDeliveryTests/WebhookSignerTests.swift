import Foundation
import XCTest

@testable import EventDelivery

/// Standard Webhooks signatures, checked against the specification's published vector: a receiver's library
/// must accept what we send, which a round trip through our own code could never show.
final class WebhookSignerTests: XCTestCase {
    // The vector the Standard Webhooks reference libraries test with.
    static let vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let vectorID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    static let vectorTimestamp: Int64 = 1_614_265_330
    static let vectorBody = #"{"test": 2432232314}"#
    static let vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

    func testThePublishedVectorIsReproducedExactly() throws {
        let signer = try WebhookSigner(secrets: [WebhookSecret(Self.vectorSecret)])
        let headers = signer.headers(id: Self.vectorID, timestamp: Self.vectorTimestamp, body: Self.vectorBody)
        XCTAssertEqual(headers.signature, Self.vectorSignature)
        XCTAssertEqual(headers.id, Self.vectorID)
        XCTAssertEqual(headers.timestamp, "1614265330")
        XCTAssertEqual(headers.fields.map(\.name), ["webhook-id", "webhook-timestamp", "webhook-signature"])
    }

    func testBytesAndTextOfTheSameBodySignAlike() throws {
        let signer = try WebhookSigner(secrets: [WebhookSecret(Self.vectorSecret)])
        let fromBytes = signer.headers(id: Self.vectorID, timestamp: Self.vectorTimestamp, body: Array(Self.vectorBody.utf8))
        XCTAssertEqual(fromBytes.signature, Self.vectorSignature)
    }

    func testDuringARotationBothSecretsSignInTheConfiguredOrder() throws {
        let old = try WebhookSecret(Self.vectorSecret)
        let new = WebhookSecret.generate()
        let rotating = try WebhookSigner(secrets: [new, old])
        let signature = rotating.headers(id: Self.vectorID, timestamp: Self.vectorTimestamp, body: Self.vectorBody).signature
        let parts = signature.split(separator: " ").map(String.init)
        XCTAssertEqual(parts.count, 2)
        XCTAssertEqual(parts[1], Self.vectorSignature, "the old secret's signature still verifies for receivers not yet moved")
        let newOnly = try WebhookSigner(secrets: [new]).headers(id: Self.vectorID, timestamp: Self.vectorTimestamp, body: Self.vectorBody)
        XCTAssertEqual(parts[0], newOnly.signature)
        XCTAssertNotEqual(parts[0], parts[1])
    }

    func testEveryPartOfTheSignedContentChangesTheSignature() throws {
        let signer = try WebhookSigner(secrets: [WebhookSecret(Self.vectorSecret)])
        let variants = [
            signer.headers(id: "msg_other", timestamp: Self.vectorTimestamp, body: Self.vectorBody),
            signer.headers(id: Self.vectorID, timestamp: Self.vectorTimestamp + 1, body: Self.vectorBody),
            signer.headers(id: Self.vectorID, timestamp: Self.vectorTimestamp, body: #"{"test": 2432232315}"#),
        ]
        for variant in variants {
            XCTAssertNotEqual(variant.signature, Self.vectorSignature)
        }
    }

    func testASignerWithoutSecretsIsRefused() {
        XCTAssertThrowsError(try WebhookSigner(secrets: [])) { error in
            XCTAssertEqual(error as? WebhookSecretError, .noSecret)
        }
    }
}
