import Crypto
import Foundation
import XCTest

@testable import EventDelivery

/// What we send, read by another implementation: Python's `cryptography` (OpenSSL) verifies the VAPID token's
/// ES256 signature and decrypts the push body, so a mistake our own tests share with swift-crypto (a DER signature
/// where JWS wants raw r || s, say) cannot pass. Skipped where python3 or `cryptography` is missing.
final class CrossCheckTests: XCTestCase {
    static let script = #"""
        import base64, json, sys
        from cryptography.hazmat.primitives import hashes, hmac
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        def b64u(text):
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

        def mac(key, data):
            h = hmac.HMAC(key, hashes.SHA256())
            h.update(data)
            return h.finalize()

        given = json.load(sys.stdin)
        token, key = given["authorization"][len("vapid t="):].split(", k=")
        signing_input, signature = token.rsplit(".", 1)
        raw = b64u(signature)
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64u(key))
        public.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                      signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        claims = json.loads(b64u(signing_input.split(".")[1]))

        body = b64u(given["body"])
        salt, key_id = body[:16], body[21:86]
        receiver = ec.derive_private_key(int.from_bytes(b64u(given["receiver_private"]), "big"), ec.SECP256R1())
        shared = receiver.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key_id))
        receiver_public = receiver.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        ikm = mac(mac(b64u(given["auth"]), shared), b"WebPush: info\x00" + receiver_public + key_id + b"\x01")
        prk = mac(salt, ikm)
        cek = mac(prk, b"Content-Encoding: aes128gcm\x00\x01")[:16]
        nonce = mac(prk, b"Content-Encoding: nonce\x00\x01")[:12]
        record = AESGCM(cek).decrypt(nonce, body[86:], None).rstrip(b"\x00")
        assert record.endswith(b"\x02"), "no last-record delimiter"
        print(json.dumps({"claims": claims, "plaintext": record[:-1].decode()}))
        """#

    func testPythonsCryptographyVerifiesTheTokenAndDecryptsThePush() throws {
        let vapid = VAPIDKey.generate()
        let browser = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let message = #"{"title":"Arrived","body":"Your donation has arrived"}"#
        let now = Int64(Date().timeIntervalSince1970)
        let given: [String: String] = [
            "authorization": try vapid.authorization(
                endpoint: "https://fcm.googleapis.com/fcm/send/abc", subject: "mailto:ops@example.org", expiresAt: now + 3600, now: now),
            "body": Base64Text.urlEncoded(
                try WebPushEncryption.encrypt(
                    plaintext: Data(message.utf8), p256dh: Base64Text.urlEncoded(browser.publicKey.x963Representation),
                    auth: Base64Text.urlEncoded(auth))),
            "receiver_private": Base64Text.urlEncoded(browser.rawRepresentation),
            "auth": Base64Text.urlEncoded(auth),
        ]
        let answer = try runPython(input: JSONSerialization.data(withJSONObject: given))
        let read = try XCTUnwrap(JSONSerialization.jsonObject(with: answer) as? [String: Any])
        XCTAssertEqual(read["plaintext"] as? String, message)
        XCTAssertEqual(
            read["claims"] as? NSDictionary, ["aud": "https://fcm.googleapis.com", "exp": now + 3600, "sub": "mailto:ops@example.org"])
    }

    /// Runs the script with `input` on its standard input and returns its standard output; skips the test when
    /// python3 or `cryptography` is not installed, throws `Refused` when the script fails.
    private func runPython(input: Data) throws -> Data {
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw XCTSkip("python3 is not installed")
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", "import cryptography"]
        probe.standardError = FileHandle.nullDevice
        try probe.run()
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else { throw XCTSkip("Python's cryptography package is not installed") }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", Self.script]
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        // The outputs are small: read to the end, then reap the process.
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Refused(output: String(decoding: errors, as: UTF8.self)) }
        return output
    }

    /// The Python side refused what we sent; its traceback says why.
    struct Refused: Error, CustomStringConvertible {
        let output: String
        var description: String { "the Python cross-check refused it: \(output)" }
    }
}
