import Crypto
import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// No secret reaches the log at any level: a cluster node at `trace` with every secret set (the store's password
/// from its file, the cluster secret, the webhook secrets and a token in the webhook URL's query, the VAPID key, the
/// JWT secret and the backend key) starts, stores a donation, tries its deliveries and stops, and its whole log holds
/// none of them.
final class SecretsInLogsTests: XCTestCase {
    func testANodeAtTraceLevelLogsNoSecret() async throws {
        let server = try await PostgresServer.shared()
        let store = try await server.makeDatabase()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let password = "store-password-Zq7Xw2"
        let passwordFile = folder.appendingPathComponent("store-password")
        try Data((password + "\n").utf8).write(to: passwordFile)
        let vapid = P256.Signing.PrivateKey()
        let vapidFile = folder.appendingPathComponent("vapid.pem")
        try Data(vapid.pemRepresentation.utf8).write(to: vapidFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: vapidFile.path)
        let webhookSecret = "whsec_" + Data((0..<32).map { UInt8($0 * 7 % 251) }).base64EncodedString()
        let queryToken = "query-token-Kp4Vn8"
        let clusterSecret = "cluster-secret-for-the-log-test-0123456789"
        var environment = ClusterFixture.environment("secrets-node", store: store)
        environment["LOCATION_BROKER_CLUSTER_SECRET"] = clusterSecret
        environment["LOCATION_BROKER_STORE_PASSWORD_FILE"] = passwordFile.path
        environment["LOCATION_BROKER_LOG_LEVEL"] = "trace"
        // Nothing listens there: every delivery fails, and the failures are logged.
        environment["LOCATION_BROKER_WEBHOOK_URL"] = "http://127.0.0.1:9/hooks/ponte?token=\(queryToken)"
        environment["LOCATION_BROKER_WEBHOOK_SECRETS"] = webhookSecret
        environment["LOCATION_BROKER_PUSH_SUBJECT"] = "https://operations.example.org/contact"
        environment["LOCATION_BROKER_VAPID_PRIVATE_KEY_FILE"] = vapidFile.path
        let node = try await startBrokerProcess(database: folder.appendingPathComponent("unused.sqlite").path, extraEnvironment: environment)
        try await ClusterFixture.put("d-log", on: node, donor: "donor@example.org", volunteer: "vol@example.org", state: .beingLookedFor)
        // The webhook's first attempts fail at once (nothing listens on port 9) and are tried again.
        try await Task.sleep(for: .seconds(3))
        await node.stop()
        let log = node.output
        XCTAssertTrue(log.contains("trace") || log.contains("debug"), "the node logged at trace level")
        let pemBody = vapid.pemRepresentation.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let secrets: [(String, String)] = [
            ("the store's password", password), ("the cluster secret", clusterSecret), ("the webhook secret", webhookSecret),
            ("the webhook secret's key", String(webhookSecret.dropFirst(6).prefix(16))), ("the webhook URL's query", queryToken),
            ("the VAPID private key (PEM)", String(pemBody.prefix(40))), ("the VAPID private key (PEM, later)", String(pemBody.suffix(40))),
            ("the VAPID private key (raw)", vapid.rawRepresentation.map { String(format: "%02x", $0) }.joined()),
            ("the JWT secret", LiveBroker.jwtSecret), ("the backend key", LiveBroker.backendKey),
        ]
        for (name, secret) in secrets {
            XCTAssertFalse(log.contains(secret), "\(name) is in the log")
        }
        XCTAssertGreaterThan(log.count, 1_000, "the node logged its start and its services")
    }
}
