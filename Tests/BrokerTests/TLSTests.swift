import BrokerClient
import BrokerProtocol
import Foundation
import HummingbirdTesting
import NIOSSL
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// With a certificate and key the broker serves wss:// and https://, with a certificate made for the test.
final class TLSTests: XCTestCase {
    /// A self-signed certificate for localhost, made with openssl.
    private func makeCertificate() async throws -> (certificate: String, key: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("broker-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("cert.pem").path
        let key = folder.appendingPathComponent("key.pem").path
        try await ChildProcess.check("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ])
        return (certificate, key)
    }

    func testTheBrokerServesWSSAndHTTPS() async throws {
        let files = try await makeCertificate()
        let live = try await startBroker {
            $0.tlsCert = files.certificate
            $0.tlsKey = files.key
        }
        var trust = TLSConfiguration.makeClientConfiguration()
        trust.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(files.certificate))

        let token = try await LiveBroker.token("donor@example.org")
        let pem = try String(contentsOfFile: files.certificate, encoding: .utf8)
        let secure = try await BrokerConnection.connect(url: "wss://localhost:\(live.port)/v1/ws", token: token, tls: try BrokerTLS(trustedRootsPEM: pem))
        guard case .welcome(let welcome) = try await secure.next() else { return XCTFail("no welcome over wss") }
        XCTAssertEqual(welcome.identity, "donor@example.org")
        await secure.close()

        let health = try await TestClient.withClient(host: "localhost", port: live.port, configuration: .init(tlsConfiguration: trust)) {
            try await $0.get("/healthz")
        }
        XCTAssertEqual(health.status, .ok)

        // Plain ws:// to a TLS port does not get a socket.
        do {
            _ = try await BrokerConnection.connect(url: "ws://127.0.0.1:\(live.port)/v1/ws", token: token, timeout: .seconds(3))
            XCTFail("a plain connection was accepted on the TLS port")
        } catch {}
        try await live.stop()
    }
}
