import Foundation
import XCTest

@testable import BrokerSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The SQLite file holds donors' homes and identities: it and every folder made for it are the broker user's alone,
/// whatever the process's umask.
final class SQLiteFileModeTests: XCTestCase {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }

    func testTheSQLiteFileAndItsFolderAreTheBrokerUsersAloneWhateverTheUmask() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("file-mode-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("nested/broker.sqlite").path
        let previous = umask(0)
        defer { umask(previous) }
        let store = try SQLiteDonationStore(path: path)
        _ = store
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        XCTAssertEqual(try mode(folder.path), 0o700)
        XCTAssertEqual(try mode(folder.deletingLastPathComponent().path), 0o700, "every folder it created")
        XCTAssertEqual(try mode(path), 0o600)
        for journal in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + journal) {
            XCTAssertEqual(try mode(path + journal), 0o600, journal)
        }
    }
}
