import Foundation
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker
@testable import TrackingPage

/// The tracking page is real files (Sources/TrackingPage/Resources/page/) compiled into the broker: what the
/// broker serves is those files and the JavaScript client (clients/javascript/), and its source map leads a
/// browser's developer tools to the files' own lines. That the script passes `node --check` and eslint:
/// PageScriptCheckTests (Tests/TrackingPageTests).
final class TrackingPageFilesTests: XCTestCase {
    private let folder = BrokerProcess.packageRoot.appendingPathComponent("Sources/TrackingPage/Resources/page")

    private func file(_ name: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    /// The page's files (and the OpenAPI document) are compiled in (`embedInCode`): the build leaves no resource
    /// bundle of the package's own beside the executable, so the binary can be copied alone (README,
    /// docs/CLIENTS.md). A `.copy` or `.process` rule would make `location-broker_<Target>.resources` appear here
    /// (`location-broker_TrackingPage.resources` for the page's).
    func testTheBrokerNeedsNoResourceFolderBesideItsBinary() async throws {
        let folder = try await BrokerProcess.executable().deletingLastPathComponent()
        let beside = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        XCTAssertEqual(beside.filter { $0.hasPrefix("location-broker_") && $0.hasSuffix(".resources") }, [])
    }

    func testTheServedPageIsTheRepositorysFiles() async throws {
        let live = try await startBroker()
        let page = try await live.request(.get, "/track/d-1")
        let stylesheet = try await live.request(.get, TrackingPage.stylesheetPath)
        let script = try await live.request(.get, TrackingPage.scriptPath)
        let client = try await live.request(.get, TrackingPage.clientPath)
        let worker = try await live.request(.get, TrackingPage.pushWorkerPath)
        try await live.stop()
        XCTAssertEqual(String(buffer: stylesheet.body ?? ByteBuffer()), try file("page.css"))
        XCTAssertEqual(String(buffer: worker.body ?? ByteBuffer()), try file("push-worker.js"), "the worker is served as it is")
        let served = String(buffer: script.body ?? ByteBuffer())
        var rest = served[...]
        for name in ["state.js", "connection.js", "rendering.js", "map.js", "push.js", "start.js"] {
            let text = try file(name)
            let range = try XCTUnwrap(rest.range(of: text), "the script has \(name), whole, after the files before it")
            rest = rest[range.upperBound...]
        }
        XCTAssertEqual(TrackingPage.Files.scripts.map(\.name), ["state.js", "connection.js", "rendering.js", "map.js", "push.js", "start.js"])
        // The script is a module that imports the JavaScript client, which the broker serves as the repository has it.
        XCTAssertTrue(served.hasPrefix("import { DonationWatcher } from '\(TrackingPage.clientPath)';\n"))
        XCTAssertEqual(client.headers[.contentType], "text/javascript; charset=utf-8")
        let canonical = BrokerProcess.packageRoot.appendingPathComponent("clients/javascript/location-broker-client.js")
        XCTAssertEqual(String(buffer: client.body ?? ByteBuffer()), try String(contentsOf: canonical, encoding: .utf8))
        // The page: page.html with what this broker serves in place of its two marks, and no mark left.
        let html = String(buffer: page.body ?? ByteBuffer())
        XCTAssertFalse(html.contains("{{"), "every mark of page.html is replaced")
        let template = try file("page.html")
        let leaflet = #"<link rel="stylesheet" href="/assets/leaflet/leaflet.css">"# + "\n"
            + #"<script src="/assets/leaflet/leaflet.js" defer></script>"# + "\n"
        let expected = template.replacingOccurrences(of: "{{leaflet}}\n", with: html.contains(leaflet) ? leaflet : "")
            .replacingOccurrences(of: "{{map}}", with: "")
        XCTAssertEqual(html, expected, "without tiles (LiveBroker's default), the page is page.html with Leaflet's tags if served")
    }

    func testTheSourceMapLeadsEveryLineToItsFile() async throws {
        let live = try await startBroker()
        let script = String(buffer: try await live.request(.get, TrackingPage.scriptPath).body ?? ByteBuffer())
        let response = try await live.request(.get, "/assets/" + TrackingPage.sourceMapName)
        try await live.stop()
        XCTAssertEqual(response.status, .ok)
        XCTAssertEqual(response.headers[.contentType], "application/json; charset=utf-8")
        XCTAssertTrue(script.hasSuffix("//# sourceMappingURL=\(TrackingPage.sourceMapName)\n"))
        struct Map: Decodable {
            let version: Int
            let sources: [String]
            let sourcesContent: [String]
            let mappings: String
        }
        let map = try JSONDecoder().decode(Map.self, from: Data(buffer: response.body ?? ByteBuffer()))
        XCTAssertEqual(map.version, 3)
        for name in ["state.js", "connection.js", "rendering.js", "map.js", "push.js", "start.js"] {
            let index = try XCTUnwrap(map.sources.firstIndex(of: "Sources/TrackingPage/Resources/page/\(name)"), name)
            XCTAssertEqual(map.sourcesContent[index], try file(name), "\(name) as it is in the repository")
        }
        // Decode the mappings and check that each mapped line of the script is that line of that file.
        let served = script.split(separator: "\n", omittingEmptySubsequences: false)
        let files = map.sourcesContent.map { $0.split(separator: "\n", omittingEmptySubsequences: false) }
        var source = 0
        var line = 0
        var mapped = 0
        for (index, segment) in map.mappings.split(separator: ";", omittingEmptySubsequences: false).enumerated() where !segment.isEmpty {
            let fields = try Self.decodeVLQ(segment)
            XCTAssertEqual(fields.count, 4)
            source += fields[1]
            line += fields[2]
            XCTAssertEqual(served[index], files[source][line], "script line \(index + 1) is \(map.sources[source]):\(line + 1)")
            mapped += 1
        }
        let fileLines = map.sourcesContent.reduce(0) { $0 + $1.split(separator: "\n", omittingEmptySubsequences: false).count - 1 }
        XCTAssertEqual(mapped, fileLines, "every line of every file is mapped")
    }

    /// Base-64 VLQ, as the source map format writes it: the sign in the lowest bit, five bits a digit, 32 for "more".
    static func decodeVLQ(_ text: Substring) throws -> [Int] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var values: [Int] = []
        var value = 0
        var shift = 0
        for character in text {
            let digit = try XCTUnwrap(alphabet.firstIndex(of: character))
            value += (digit & 31) << shift
            if digit & 32 != 0 {
                shift += 5
            } else {
                values.append(value & 1 == 1 ? -(value >> 1) : value >> 1)
                value = 0
                shift = 0
            }
        }
        return values
    }
}
