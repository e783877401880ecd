import Crypto
import Foundation
import XCTest

@testable import EventDelivery

/// Web Push encryption by RFC 8291's own example, then by decrypting what we send as a browser does, then the
/// keys a browser would never send.
final class WebPushEncryptionTests: XCTestCase {
    // RFC 8291 section 5 and Appendix A: the example's inputs and the body it gives.
    enum Example {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let receiverPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let receiverPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let body =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_"
            + "yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    func testTheRFC8291ExampleIsReproducedToTheByte() throws {
        let body = try WebPushEncryption.encrypt(
            plaintext: Data(Example.plaintext.utf8), p256dh: Example.receiverPublic, auth: Example.authSecret,
            salt: Array(try XCTUnwrap(Base64Text.urlDecoded(Example.salt))),
            ephemeralKey: P256.KeyAgreement.PrivateKey(rawRepresentation: try XCTUnwrap(Base64Text.urlDecoded(Example.senderPrivate))))
        XCTAssertEqual(Base64Text.urlEncoded(body), Example.body)
    }

    func testABrowserDecryptsWhatIsSent() throws {
        let browser = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let message = Data(#"{"title":"On the way","body":"About 4 minutes away"}"#.utf8)
        let first = try WebPushEncryption.encrypt(
            plaintext: message, p256dh: Base64Text.urlEncoded(browser.publicKey.x963Representation), auth: Base64Text.urlEncoded(auth))
        let second = try WebPushEncryption.encrypt(
            plaintext: message, p256dh: Base64Text.urlEncoded(browser.publicKey.x963Representation), auth: Base64Text.urlEncoded(auth))
        XCTAssertEqual(try BrowserDecryption.open(first, receiver: browser, authSecret: auth), message)
        XCTAssertEqual(try BrowserDecryption.open(second, receiver: browser, authSecret: auth), message)
        XCTAssertNotEqual(first.prefix(16), second.prefix(16), "a new salt for every message")
        XCTAssertNotEqual(first[21..<86], second[21..<86], "a new ephemeral key for every message")
        XCTAssertEqual(Array(first[16..<21]), [0, 0, 0x10, 0, 65], "record size 4096, then a 65-byte key id")
        XCTAssertEqual(first.count, 86 + message.count + 1 + 16)

        let other = P256.KeyAgreement.PrivateKey()
        XCTAssertThrowsError(try BrowserDecryption.open(first, receiver: other, authSecret: auth), "only the subscriber can read it")
    }

    func testTheRFCExampleDecryptsWithTheReceiversKey() throws {
        let receiver = try P256.KeyAgreement.PrivateKey(rawRepresentation: XCTUnwrap(Base64Text.urlDecoded(Example.receiverPrivate)))
        let opened = try BrowserDecryption.open(
            XCTUnwrap(Base64Text.urlDecoded(Example.body)), receiver: receiver, authSecret: XCTUnwrap(Base64Text.urlDecoded(Example.authSecret)))
        XCTAssertEqual(String(decoding: opened, as: UTF8.self), Example.plaintext)
    }

    func testTheLargestMessageFillsA4096ByteBodyAndOneMoreByteIsRefused() throws {
        let largest = Data(repeating: 0x61, count: WebPushEncryption.maximumPlaintextByteCount)
        let body = try WebPushEncryption.encrypt(plaintext: largest, p256dh: Example.receiverPublic, auth: Example.authSecret)
        XCTAssertEqual(body.count, 4096)
        XCTAssertThrowsError(
            try WebPushEncryption.encrypt(plaintext: largest + [0x61], p256dh: Example.receiverPublic, auth: Example.authSecret)
        ) { error in
            XCTAssertEqual(error as? WebPushEncryptionError, .plaintextTooLarge(3994))
        }
    }

    func testKeysABrowserWouldNotSendAreRefusedByName() throws {
        let point = try XCTUnwrap(Base64Text.urlDecoded(Example.receiverPublic))
        var offCurve = point
        offCurve[64] ^= 0x01
        let compressed = Data([0x02 | (point[64] & 1)]) + point[1..<33]
        let cases: [(p256dh: String, auth: String, WebPushEncryptionError)] = [
            ("not base64url!", Example.authSecret, .p256dhNotBase64URL),
            ("BCVxsr7N/eNgVRqv", Example.authSecret, .p256dhNotBase64URL),
            (Base64Text.urlEncoded(compressed), Example.authSecret, .p256dhNotUncompressedPoint(byteCount: 33)),
            (Base64Text.urlEncoded(point.dropLast()), Example.authSecret, .p256dhNotUncompressedPoint(byteCount: 64)),
            (Base64Text.urlEncoded(offCurve), Example.authSecret, .p256dhNotOnCurve),
            (Base64Text.urlEncoded(Data(count: 65)), Example.authSecret, .p256dhNotUncompressedPoint(byteCount: 65)),
            (Example.receiverPublic, "BTBZMqHH6r4Tts7J/aSIgg", .authNotBase64URL),
            (Example.receiverPublic, "BTBZMqHH6r4Tts7J_aSI", .authWrongLength(byteCount: 15)),
            (Example.receiverPublic, Base64Text.urlEncoded(Data(count: 32)), .authWrongLength(byteCount: 32)),
        ]
        for (p256dh, auth, expected) in cases {
            XCTAssertThrowsError(try WebPushEncryption.encrypt(plaintext: Data("hi".utf8), p256dh: p256dh, auth: auth), "\(expected)") {
                XCTAssertEqual($0 as? WebPushEncryptionError, expected)
            }
        }
        XCTAssertNoThrow(
            try WebPushEncryption.encrypt(plaintext: Data("hi".utf8), p256dh: Example.receiverPublic + "=", auth: Example.authSecret + "=="),
            "padding is optional")
    }
}

/// What a browser does with a push body (RFC 8291 section 3.4, RFC 8188 section 2), written from the RFCs' HMAC
/// steps rather than with the sender's code, so a shared mistake cannot make the two agree.
enum BrowserDecryption {
    struct Unreadable: Error {}

    static func open(_ body: Data, receiver: P256.KeyAgreement.PrivateKey, authSecret: Data) throws -> Data {
        let body = Data(body)
        guard body.count > 86, body[body.startIndex + 20] == 65 else { throw Unreadable() }
        let salt = body.prefix(16)
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let senderPublic = body[21..<86]
        let ciphertext = body[86...]
        guard ciphertext.count <= recordSize else { throw Unreadable() }

        let sender = try P256.KeyAgreement.PublicKey(x963Representation: senderPublic)
        let shared = try receiver.sharedSecretFromKeyAgreement(with: sender).withUnsafeBytes { Data($0) }
        let prkKey = hmac(key: authSecret, Data(shared))
        let keyInfo = Data("WebPush: info".utf8) + [0] + receiver.publicKey.x963Representation + senderPublic
        let ikm = hmac(key: prkKey, keyInfo + [1])
        let prk = hmac(key: Data(salt), ikm)
        let cek = hmac(key: prk, Data("Content-Encoding: aes128gcm".utf8) + [0, 1]).prefix(16)
        let nonce = hmac(key: prk, Data("Content-Encoding: nonce".utf8) + [0, 1]).prefix(12)

        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext.dropLast(16), tag: ciphertext.suffix(16))
        var record = try AES.GCM.open(box, using: SymmetricKey(data: cek))
        // The last record ends with 0x02 and then only zero padding.
        while record.last == 0 { record.removeLast() }
        guard record.last == 0x02 else { throw Unreadable() }
        return record.dropLast()
    }

    private static func hmac(key: Data, _ message: Data) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}
