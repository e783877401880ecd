import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// `log_format: json`: the broker writes one JSON object per line, for log shippers (`JSONLogHandlerTests` holds
/// the record's fields).
final class JSONLogTests: XCTestCase {
    private func objects(in text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(line)")
        }
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
