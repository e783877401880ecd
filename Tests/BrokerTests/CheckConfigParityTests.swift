import Foundation
import XCTest

@testable import BrokerTestSupport

/// check-config refuses what serve refuses before it binds, with the same reason: every file, key and key set
/// serve checks at start, each broken in turn, is run through both commands.
final class CheckConfigParityTests: XCTestCase {
    private let secrets = SettingsFixture.secrets

    private func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("check-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Two self-signed certificates with their keys, so that a certificate can be given the other's key.
    private func certificates(in folder: URL) async throws -> [(certificate: String, key: String)] {
        var pairs: [(String, String)] = []
        for name in ["a", "b"] {
            let certificate = folder.appendingPathComponent("\(name)-cert.pem").path
            let key = folder.appendingPathComponent("\(name)-key.pem").path
            try await ChildProcess.check("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=localhost", "-keyout", key, "-out", certificate,
            ])
            pairs.append((certificate, key))
        }
        return pairs
    }

    func testCheckConfigRefusesEachOfServesStartRefusals() async throws {
        let folder = try folder()
        let tls = try await certificates(in: folder)
        let garbage = folder.appendingPathComponent("garbage").path
        try Data("not what it should be\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let locked = folder.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o500])
        let missing = folder.appendingPathComponent("missing").path

        // Each case: the flags that break one thing serve checks before it binds, and what the refusal must say.
        let refusals: [(name: String, flags: [String], says: String)] = [
            ("tiles file missing", ["--map-tiles-file", missing], "missing"),
            ("tiles file not MBTiles", ["--map-tiles-file", garbage], "garbage"),
            ("TLS certificate missing", ["--tls-cert", missing, "--tls-key", tls[0].key], "certificate"),
            ("TLS key missing", ["--tls-cert", tls[0].certificate, "--tls-key", missing], "key"),
            ("TLS key of another certificate", ["--tls-cert", tls[0].certificate, "--tls-key", tls[1].key], "key"),
            ("VAPID key not a key", ["--push-subject", "mailto:ops@example.org", "--vapid-private-key-file", garbage], "garbage"),
            (
                "VAPID key cannot be created", ["--push-subject", "mailto:ops@example.org", "--vapid-private-key-file", locked.appendingPathComponent("sub/vapid.pem").path],
                "vapid"
            ),
            (
                "JWKS file missing", ["--jwks-file", missing, "--audience", "a-project", "--issuer", "https://issuer.example.org"],
                "missing"
            ),
        ]
        // Root may write in a folder of mode 0500: that case holds only for other users.
        let cases = getuid() == 0 ? refusals.filter { $0.name != "VAPID key cannot be created" } : refusals
        for refusal in cases {
            let database = folder.appendingPathComponent("\(UUID().uuidString).sqlite").path
            let common = ["--config", try settingsFile("# defaults\n"), "--port", "0", "--database", database]
            let serve = try await BrokerCommandLine.run(["serve"] + common + refusal.flags, environment: secrets)
            XCTAssertEqual(serve.status, 1, "\(refusal.name): serve must refuse to start: \(serve.output)")
            let check = try await BrokerCommandLine.run(["check-config"] + common + refusal.flags, environment: secrets)
            XCTAssertNotEqual(check.status, 0, "\(refusal.name): check-config passed what serve refuses: \(serve.output)")
            let serveReason = serve.output.split(separator: "\n").last.map(String.init) ?? ""
            XCTAssertTrue(serveReason.hasPrefix("Error: "), "\(refusal.name): \(serve.output)")
            XCTAssertTrue(check.output.contains(serveReason), "\(refusal.name): check-config does not give serve's reason \(serveReason): \(check.output)")
            XCTAssertTrue(serveReason.lowercased().contains(refusal.says.lowercased()), "\(refusal.name): \(serveReason)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: database), "\(refusal.name): serve opened the store before refusing")
        }
    }

    func testCheckConfigPassesAGoodTLSPairAndTilesLeftUnset() async throws {
        let folder = try folder()
        let tls = try await certificates(in: folder)
        let check = try await BrokerCommandLine.run(
            ["check-config", "--config", try settingsFile("# defaults\n"), "--tls-cert", tls[0].certificate, "--tls-key", tls[0].key],
            environment: secrets)
        XCTAssertEqual(check.status, 0, check.output)
    }
}
