import Foundation
import JSONLogging
import Logging
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// `log_format: json`: one JSON object per line, for log shippers.
final class JSONLogTests: XCTestCase {
    private func objects(in text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    func testEachRecordIsOneJSONObjectWithLevelTimeMessageAndMetadata() throws {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "location-broker") { label in JSONLogHandler(label: label) { line in lines.withLockedValue { $0.append(line) } } }
        logger[metadataKey: "connection"] = "7"
        logger.notice("closing a connection that keeps sending invalid frames", metadata: ["reason": "too many pings", "codes": ["4009"]])
        logger.debug("below the level: not written")
        let written = lines.withLockedValue { $0 }
        XCTAssertEqual(written.count, 1)
        XCTAssertEqual(written.first?.hasSuffix("}\n"), true, "one line per record")
        let record = try XCTUnwrap(try objects(in: written.joined()).first)
        XCTAssertEqual(record["level"] as? String, "notice")
        XCTAssertEqual(record["label"] as? String, "location-broker")
        XCTAssertEqual(record["message"] as? String, "closing a connection that keeps sending invalid frames")
        let metadata = try XCTUnwrap(record["metadata"] as? [String: Any])
        XCTAssertEqual(metadata["connection"] as? String, "7")
        XCTAssertEqual(metadata["reason"] as? String, "too many pings")
        XCTAssertEqual(metadata["codes"] as? [String], ["4009"])
        let time = try XCTUnwrap(record["time"] as? String)
        XCTAssertNotNil(try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(time), time)
    }

    func testTheBrokerWritesJSONLinesWhenAskedTo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("json-log-\(UUID().uuidString.prefix(8))")
        let broker = try await startBrokerProcess(
            database: folder.appendingPathComponent("broker.sqlite").path, extraEnvironment: ["LOCATION_BROKER_LOG_FORMAT": "json"])
        broker.signal(SIGTERM)
        _ = await broker.waitForExit(timeout: .seconds(15))
        let records = try objects(in: broker.startupOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertGreaterThanOrEqual(records.count, 2, broker.startupOutput)
        let listening = try XCTUnwrap(records.first { $0["message"] as? String == "listening" })
        XCTAssertEqual(listening["level"] as? String, "notice")
        XCTAssertEqual((listening["metadata"] as? [String: Any])?["address"] as? String, "127.0.0.1:\(broker.port)")
    }
}
