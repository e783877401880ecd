import Foundation
import JSONLogging
import Logging
import NIOConcurrencyHelpers
import XCTest

/// One JSON object per line, for log shippers: the record's level, label, time, message and metadata.
final class JSONLogHandlerTests: XCTestCase {
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
}
