import BrokerClient
import BrokerProtocol
import Foundation
import GRDB
import HTTPTypes
import NIOCore
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// `location-broker backup` while the broker serves, then the restore docs/OPERATIONS.md tells: the copy is private,
/// never replaces a file unasked, holds what was acknowledged before it, and after a restore a watch link of a
/// donation made after the backup says what happened instead of "ended".
final class BackupRestoreTests: XCTestCase {
    private static let upgrade: HTTPFields = [
        .connection: "Upgrade", .upgrade: "websocket", .secWebSocketVersion: "13", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==",
    ]

    private func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    private func watchLink(_ live: LiveBroker, _ id: String) async throws -> WatchLink {
        let response = try await live.backend(.post, "/v1/donations/\(id)/watch-token")
        XCTAssertEqual(response.status, .ok, String(buffer: response.body ?? ByteBuffer()))
        return try JSONDecoder().decode(WatchLink.self, from: Data(buffer: response.body ?? ByteBuffer()))
    }

    /// Opens a socket with a watch link and reads the welcome.
    private func opens(_ live: LiveBroker, _ link: WatchLink) async throws -> Bool {
        let connection = try await BrokerConnection.connect(url: live.webSocketURL, token: link.token)
        let first = try await connection.next()
        await connection.close()
        if case .welcome = first { return true }
        return false
    }

    private func upgradeRefusal(_ live: LiveBroker, _ token: String) async throws -> (HTTPResponse.Status, String) {
        var headers = Self.upgrade
        headers[.authorization] = "Bearer \(token)"
        let response = try await live.request(.get, "/v1/ws", headers: headers)
        return (response.status, response.error?.message ?? "")
    }

    func testABackupTakenWhileServingIsPrivateAndARestoreSaysWhatALinkMadeAfterItLost() async throws {
        let folder = try folder()
        let database = folder.appendingPathComponent("data/broker.sqlite").path
        let copy = folder.appendingPathComponent("backups/nightly/broker.sqlite").path
        let config = try settingsFile("# defaults\n")
        let live = try await startBroker(database: database)
        try await live.put("d-1", state: .beingTakenTo)
        let before = try await watchLink(live, "d-1")

        let backup = try await BrokerCommandLine.run(["backup", "--config", config, "--database", database, "--to", copy])
        XCTAssertEqual(backup.status, 0, backup.output)
        XCTAssertEqual(try mode(copy), 0o600, "the copy holds donors' homes")
        XCTAssertEqual(try mode(folder.appendingPathComponent("backups").path), 0o700)
        XCTAssertEqual(try mode(folder.appendingPathComponent("backups/nightly").path), 0o700)
        let copied = try DatabaseQueue(path: copy)
        let ids = try await copied.read { db in try String.fetchAll(db, sql: "SELECT id FROM donation") }
        try copied.close()
        XCTAssertEqual(ids, ["d-1"])

        let refused = try await BrokerCommandLine.run(["backup", "--config", config, "--database", database, "--to", copy])
        XCTAssertEqual(refused.status, 1, "an existing copy is replaced only with --force: \(refused.output)")
        XCTAssertTrue(refused.output.contains("give --force"), refused.output)
        let forced = try await BrokerCommandLine.run(["backup", "--config", config, "--database", database, "--to", copy, "--force"])
        XCTAssertEqual(forced.status, 0, forced.output)
        XCTAssertEqual(try mode(copy), 0o600)

        // After the backup: a donation and its donor's link, which the restore will lose.
        try await live.put("d-2", state: .beingTakenTo)
        let after = try await watchLink(live, "d-2")
        try await live.stop()

        // The restore docs/OPERATIONS.md tells: the broker stopped, the copy in place, the old -wal and -shm gone.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try FileManager.default.copyItem(atPath: copy, toPath: database)
        let restored = try await startBroker(database: database)
        let kept = try await restored.backend(.get, "/v1/donations/d-1")
        let lost = try await restored.backend(.get, "/v1/donations/d-2")
        XCTAssertEqual(kept.status, .ok)
        XCTAssertEqual(lost.status, .notFound)
        let opensBefore = try await opens(restored, before)
        XCTAssertTrue(opensBefore, "a link made before the backup still opens its donation")

        // The backend PUTs d-2 again: the link made for the lost record says so, not that the donation ended.
        try await restored.put("d-2", state: .beingTakenTo)
        let (status, message) = try await upgradeRefusal(restored, after.token)
        XCTAssertEqual(status, .unauthorized)
        XCTAssertFalse(message.contains("has ended"), message)
        XCTAssertTrue(message.contains("restored from an earlier backup"), message)
        XCTAssertTrue(message.contains("ask for a new link"), message)
        // And a new link for it opens it.
        let fresh = try await watchLink(restored, "d-2")
        let opensFresh = try await opens(restored, fresh)
        XCTAssertTrue(opensFresh)
    }

    func testABackupOfNoDatabaseCreatesNothing() async throws {
        let folder = try folder()
        let database = folder.appendingPathComponent("absent.sqlite").path
        let copy = folder.appendingPathComponent("copy.sqlite").path
        let result = try await BrokerCommandLine.run(["backup", "--config", try settingsFile("# defaults\n"), "--database", database, "--to", copy])
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("there is no database at \(database)"), result.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: database))
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy))
    }
}
