import BrokerProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker
@testable import TrackingPage

/// The tracking page's street map: Leaflet served from `leaflet_folder` (only its own files), the page without
/// it when it is missing, and a Content-Security-Policy that allows `map_tiles_url`'s origin for images and
/// nothing else. Which templates are taken: TileURLTemplateTests (Tests/TrackingPageTests).
final class TrackingMapTests: XCTestCase {
    private var folder: URL!
    private var live: LiveBroker?

    override func setUp() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("leaflet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("leaflet/images"), withIntermediateDirectories: true)
        for (name, text) in [
            ("leaflet/leaflet.js", "window.L = {}; // test leaflet"), ("leaflet/leaflet.css", ".leaflet-container {}"),
            ("leaflet/images/layers.png", "png"), ("leaflet/leaflet.js.map", "SOURCE MAP"), ("leaflet/README.secret", "NOT SERVED"),
            ("outside.txt", "OUTSIDE THE FOLDER"),
        ] {
            try Data(text.utf8).write(to: folder.appendingPathComponent(name))
        }
    }

    override func tearDown() async throws {
        try await live?.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    private func start(_ adjust: @escaping (inout BrokerConfiguration) -> Void = { _ in }) async throws -> LiveBroker {
        let leaflet = folder.appendingPathComponent("leaflet").path
        let broker = try await startBroker {
            $0.map.leafletFolder = leaflet
            adjust(&$0)
        }
        live = broker
        return broker
    }

    private func text(_ response: TestClient.Response) -> String {
        String(buffer: response.body ?? ByteBuffer())
    }

    /// The page's Content-Security-Policy as directive name → sources.
    private func policy(_ response: TestClient.Response) throws -> [String: [String]] {
        let header = try XCTUnwrap(response.headers[.contentSecurityPolicy])
        var directives: [String: [String]] = [:]
        for part in header.split(separator: ";") {
            let words = part.split(separator: " ").map(String.init)
            guard let name = words.first else { continue }
            XCTAssertNil(directives[name], "\(name) appears once")
            directives[name] = Array(words.dropFirst())
        }
        return directives
    }

    func testLeafletIsServedFromItsFolderAndThePageLinksIt() async throws {
        let broker = try await start()
        let script = try await broker.request(.get, "/assets/leaflet/leaflet.js")
        XCTAssertEqual(script.status, .ok)
        XCTAssertEqual(script.headers[.contentType], "text/javascript; charset=utf-8")
        XCTAssertEqual(text(script), "window.L = {}; // test leaflet")
        let minified = try await broker.request(.get, "/assets/leaflet/leaflet.min.js")
        XCTAssertEqual(minified.status, .notFound, "one name for the page's script")
        let css = try await broker.request(.get, "/assets/leaflet/leaflet.css")
        XCTAssertEqual(css.headers[.contentType], "text/css; charset=utf-8")
        let image = try await broker.request(.get, "/assets/leaflet/images/layers.png")
        XCTAssertEqual(image.status, .ok)
        XCTAssertEqual(image.headers[.contentType], "image/png")
        let lacking = try await broker.request(.get, "/assets/leaflet/images/marker-icon.png")
        XCTAssertEqual(lacking.status, .notFound, "a file the folder lacks")

        let html = text(try await broker.request(.get, "/track/d-1"))
        XCTAssertTrue(html.contains(#"<link rel="stylesheet" href="/assets/leaflet/leaflet.css">"#))
        XCTAssertTrue(html.contains(#"<script src="/assets/leaflet/leaflet.js" defer></script>"#))
        let leaflet = try XCTUnwrap(html.range(of: "leaflet.js"))
        let ours = try XCTUnwrap(html.range(of: TrackingPage.scriptPath))
        XCTAssertLessThan(leaflet.lowerBound, ours.lowerBound, "Leaflet runs before the page's script")
    }

    func testTheMinifiedBuildIsServedWhenTheFolderHasOne() async throws {
        try Data("window.L = {}; // minified".utf8).write(to: folder.appendingPathComponent("leaflet/leaflet.min.js"))
        let broker = try await start()
        let script = try await broker.request(.get, "/assets/leaflet/leaflet.js")
        XCTAssertEqual(text(script), "window.L = {}; // minified")
    }

    func testOnlyLeafletsFilesAreServedNeverAPathFromTheRequest() async throws {
        let broker = try await start()
        let attempts = [
            "/assets/leaflet/README.secret", "/assets/leaflet/leaflet.js.map", "/assets/leaflet/", "/assets/leaflet", "/assets/leaflet/images/",
            "/assets/leaflet/../outside.txt", "/assets/leaflet/%2e%2e/outside.txt", "/assets/leaflet/..%2foutside.txt",
            "/assets/leaflet/images/../../outside.txt", "/assets/leaflet/images/%2e%2e%2f%2e%2e%2foutside.txt",
            "/assets/leaflet/\(folder.path)/outside.txt", "/assets/leaflet//etc/passwd", "/assets/leaflet/%2fetc%2fpasswd",
            "/assets/leaflet/images/..%5c..%5coutside.txt", "/assets/leaflet/leaflet.js%00.png", "/assets/leaflet/LEAFLET.JS",
        ]
        for path in attempts {
            let response = try await broker.request(.get, path)
            XCTAssertEqual(response.status, .notFound, path)
            let body = text(response)
            for secret in ["NOT SERVED", "SOURCE MAP", "OUTSIDE THE FOLDER", "root:"] {
                XCTAssertFalse(body.contains(secret), "\(path) leaked \(secret)")
            }
        }
        let post = try await broker.request(.post, "/assets/leaflet/leaflet.js", body: "{}")
        XCTAssertEqual(post.status, .methodNotAllowed)
    }

    func testWithoutLeafletThePageGoesOnWithoutTheStreetMap() async throws {
        let broker = try await start { $0.map.leafletFolder = "/nonexistent/leaflet" }
        let page = try await broker.request(.get, "/track/d-1")
        XCTAssertEqual(page.status, .ok)
        let html = text(page)
        XCTAssertFalse(html.contains("/assets/leaflet/"), "the page links no Leaflet the broker does not serve")
        for id in ["distance", "eta", "map-desc", "events"] {
            XCTAssertTrue(html.contains(#"id="\#(id)""#), "the facts are still text: #\(id)")
        }
        let leaflet = try await broker.request(.get, "/assets/leaflet/leaflet.js")
        XCTAssertEqual(leaflet.status, .notFound)
        let script = text(try await broker.request(.get, TrackingPage.scriptPath))
        XCTAssertTrue(script.contains("typeof L === 'undefined'"), "the script goes on without Leaflet")
    }

    func testWithoutTilesThePageLoadsNothingFromAnotherHost() async throws {
        let broker = try await start()
        let page = try await broker.request(.get, "/track/d-1")
        let directives = try policy(page)
        XCTAssertEqual(directives["default-src"], ["'none'"])
        XCTAssertEqual(directives["img-src"], ["'self'", "data:"])
        XCTAssertEqual(directives["script-src"], ["'self'"])
        XCTAssertEqual(directives["style-src"], ["'self'"])
        XCTAssertEqual(directives["connect-src"], ["'self'"])
        XCTAssertEqual(directives["worker-src"], ["'self'"], "the notification worker, from the broker only")
        let html = text(page)
        XCTAssertFalse(html.contains("data-tiles"), "no tile layer: a plain background")
    }

    func testATilesFileIsDrawnFromTheBroker() async throws {
        let path = folder.appendingPathComponent("map.mbtiles").path
        try MBTilesFixture.make(at: path, tiles: [(12, 1383, 2467, MBTilesFixture.red)])
        let broker = try await start { $0.map.tilesFile = path }
        let page = try await broker.request(.get, "/track/d-1")
        XCTAssertEqual(try policy(page)["img-src"], ["'self'", "data:"], "tiles from the broker need no other origin")
        let html = text(page)
        XCTAssertTrue(html.contains(#"data-tiles="/tiles/{z}/{x}/{y}""#), html)
        XCTAssertTrue(html.contains(#"data-min-zoom="12" data-max-zoom="13" data-bounds="-58.44,-34.625,-58.36,-34.57""#), html)
    }

    func testATileServerIsTheOneOtherOriginAndOnlyForImages() async throws {
        let broker = try await start {
            $0.map.tilesURL = try? TileURLTemplate("https://tiles.example.org:8443/osm/{z}/{x}/{y}.png?style=a&v=1")
            $0.map.tilesAttribution = #"© OpenStreetMap <script>alert("x")</script>"#
        }
        let page = try await broker.request(.get, "/track/d-1")
        let directives = try policy(page)
        XCTAssertEqual(directives["img-src"], ["'self'", "data:", "https://tiles.example.org:8443"])
        for (name, sources) in directives where name != "img-src" {
            XCTAssertFalse(sources.contains { $0.contains("example.org") }, "\(name) does not allow the tile server")
        }
        let html = text(page)
        XCTAssertTrue(html.contains(#"data-tiles="https://tiles.example.org:8443/osm/{z}/{x}/{y}.png?style=a&amp;v=1""#), html)
        XCTAssertTrue(html.contains(#"data-attribution="© OpenStreetMap &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;""#), html)
        XCTAssertFalse(html.contains("<script>alert"), "the attribution is text, never markup")
    }
}
