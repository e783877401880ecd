import Foundation
import XCTest

@testable import EventDelivery

/// Reading, making and never printing webhook secrets.
final class WebhookSecretTests: XCTestCase {
    func testASpecificationSecretIsReadToItsBytes() throws {
        let secret = try WebhookSecret(" whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw ")
        XCTAssertEqual(secret.bytes, Array(Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!))
        XCTAssertEqual(secret.text, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    }

    func testAGeneratedSecretHas32RandomBytesAndReadsBack() throws {
        let first = WebhookSecret.generate()
        let second = WebhookSecret.generate()
        XCTAssertEqual(first.bytes.count, 32)
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(try WebhookSecret(first.text), first)
    }

    func testTheSecretNeverPrints() throws {
        let secret = try WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        var dumped = ""
        dump(secret, to: &dumped)
        for shown in [secret.description, "\(secret)", String(reflecting: secret), dumped, "\([secret])"] {
            XCTAssertFalse(shown.contains("MfKQ9r8G"), shown)
            XCTAssertTrue(shown.contains("24 bytes"), shown)
        }
    }

    func testMalformedSecretsAreRefusedWithTheirReason() {
        let cases: [(String, WebhookSecretError)] = [
            ("", .empty),
            ("   ", .empty),
            ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", .missingPrefix),
            ("whsec:MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", .missingPrefix),
            ("whsec_", .notBase64),
            ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La-aSw", .notBase64),
            ("whsec_MfKQ9r8G KYqrTwjUPD8ILPZIo2LaLaSw", .notBase64),
            ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS=w", .notBase64),
            ("whsec_" + Data(count: 16).base64EncodedString(), .tooShort(16)),
            ("whsec_" + Data(count: 65).base64EncodedString(), .tooLong(65)),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try WebhookSecret(text), text) { error in
                XCTAssertEqual(error as? WebhookSecretError, expected, text)
                XCTAssertFalse("\(error)".contains("MfKQ9r8G"), "the message does not repeat the secret")
            }
        }
    }

    func testAListIsReadInOrderAndABadItemIsNamedByItsPosition() throws {
        let generated = WebhookSecret.generate()
        let list = try WebhookSecret.list("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, \(generated.text)")
        XCTAssertEqual(list, [try WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), generated])

        XCTAssertThrowsError(try WebhookSecret.list("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw,")) { error in
            XCTAssertEqual(error as? WebhookSecretError, .inList(position: 2, .empty))
            XCTAssertEqual("\(error)", "webhook secret 2 of the list: \(WebhookSecretError.empty)")
        }
    }
}
