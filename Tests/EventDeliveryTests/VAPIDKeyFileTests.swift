import Foundation
import XCTest

@testable import EventDelivery

/// The VAPID key's file: made once with modes only the broker's user can read, then read back by every start and
/// every node, so the browser's subscriptions stay valid.
final class VAPIDKeyFileTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func mode(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func testAMissingKeyIsMadeInPrivateFoldersAndReadBackNextTime() throws {
        let path = folder.appendingPathComponent("keys/push/vapid-private.pem").path
        let made = try VAPIDKey.createOrLoad(pemFile: path)
        XCTAssertEqual(try mode(path), 0o600)
        XCTAssertEqual(try mode(folder.appendingPathComponent("keys/push").path), 0o700)
        XCTAssertEqual(try mode(folder.appendingPathComponent("keys").path), 0o700)
        XCTAssertEqual(try mode(folder.path), 0o700)

        let again = try VAPIDKey.createOrLoad(pemFile: path)
        XCTAssertEqual(again.publicKeyBase64URL, made.publicKeyBase64URL)
        XCTAssertEqual(try VAPIDKey.load(pemFile: path).publicKeyBase64URL, made.publicKeyBase64URL)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("keys/push").path)
        XCTAssertEqual(leftovers, ["vapid-private.pem"], "the temporary file is gone")
    }

    func testProcessesStartingTogetherEndWithOneKey() async throws {
        let path = folder.appendingPathComponent("vapid-private.pem").path
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { try VAPIDKey.createOrLoad(pemFile: path).publicKeyBase64URL }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        XCTAssertEqual(keys.count, 1)
        XCTAssertEqual(keys.first, try VAPIDKey.load(pemFile: path).publicKeyBase64URL)
    }

    func testAFileThatIsNotAKeyIsRefusedAndLeftAlone() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("vapid-private.pem").path
        try "hello".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try VAPIDKey.createOrLoad(pemFile: path)) { error in
            XCTAssertEqual(error as? VAPIDKeyError, .badFile(path: path))
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "hello")
    }

    func testAMissingFileIsNamedWithTheSystemsReason() throws {
        let path = folder.appendingPathComponent("absent.pem").path
        XCTAssertThrowsError(try VAPIDKey.load(pemFile: path)) { error in
            guard case .file(let named, let reason) = error as? VAPIDKeyError else { return XCTFail("\(error)") }
            XCTAssertEqual(named, path)
            XCTAssertFalse(reason.isEmpty)
        }
    }
}
