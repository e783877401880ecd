import Foundation
import JSONLogging
import Logging
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerTestSupport

/// What a WebSocket connection logs of its life: at debug level its opening and its end, each with the
/// connection's metadata; at the default level, nothing for an ordinary connection.
final class ConnectionLogTests: XCTestCase {
    /// Opens a socket with a logger at `level`, closes it as a client does, and returns the records written.
    private func records(at level: Logger.Level) throws -> [[String: Any]] {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "location-broker") { label in JSONLogHandler(label: label) { line in lines.withLockedValue { $0.append(line) } } }
        logger.logLevel = level
        let socket = try EmbeddedWebSocket(logger: logger)
        defer { socket.stop() }
        _ = try socket.frames()
        try socket.sendClose(code: 1000)
        _ = try socket.frames()
        XCTAssertFalse(socket.isOpen, "the client's close ends the connection")
        return try lines.withLockedValue { $0 }.map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
        }
    }

    func testAtDebugLevelAConnectionsOpeningAndEndAreLoggedWithItsIdentity() throws {
        let written = try records(at: .debug)
        let messages = written.compactMap { $0["message"] as? String }
        XCTAssertTrue(messages.contains("websocket open"), "\(messages)")
        XCTAssertTrue(messages.contains("websocket closed"), "\(messages)")
        for record in written where ["websocket open", "websocket closed"].contains(record["message"] as? String) {
            let metadata = record["metadata"] as? [String: Any]
            XCTAssertEqual(metadata?["identity"] as? String, "donor@example.org", "\(record)")
            XCTAssertNotNil(metadata?["connection"], "\(record)")
        }
    }

    func testAtTheDefaultLevelAnOrdinaryConnectionLogsNothing() throws {
        XCTAssertEqual(try records(at: .info).count, 0)
    }
}
