import BrokerProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker
@testable import TrackingPage

/// `map_tiles_file`: an MBTiles file the broker serves at `/tiles/{z}/{x}/{y}`, so that the donor's map needs
/// no third party. Each test makes its own small file of 1×1 PNGs (`MBTilesFixture`); the reader alone:
/// MBTilesTests (Tests/TrackingPageTests).
final class MapTilesTests: XCTestCase {
    private var folder: URL!
    private var live: LiveBroker?

    override func setUp() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("map-tiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try await live?.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    private func start(format: String = "png", tiles: [(Int, Int, Int, Data)]? = nil) async throws -> LiveBroker {
        let path = folder.appendingPathComponent("map.mbtiles").path
        let (red, blue) = (MBTilesFixture.red, MBTilesFixture.blue)
        try MBTilesFixture.make(at: path, format: format, tiles: tiles ?? [(12, 1383, 2467, red), (12, 1383, 2468, blue), (13, 2766, 4935, red)])
        let broker = try await startBroker { $0.map.tilesFile = path }
        live = broker
        return broker
    }

    func testATileComesFromTheFileWithItsContentTypeAndAnETag() async throws {
        let broker = try await start()
        let red = try await broker.request(.get, "/tiles/12/1383/2467")
        XCTAssertEqual(red.status, .ok)
        XCTAssertEqual(red.headers[.contentType], "image/png")
        XCTAssertEqual(red.headers[.xContentTypeOptions], "nosniff")
        XCTAssertEqual(red.body.map { Data($0.readableBytesView) }, MBTilesFixture.red)
        let blue = try await broker.request(.get, "/tiles/12/1383/2468")
        XCTAssertEqual(blue.body.map { Data($0.readableBytesView) }, MBTilesFixture.blue, "rows are counted from the north: the file's TMS rows are flipped")
        let etag = try XCTUnwrap(red.headers[.eTag])
        XCTAssertTrue(etag.hasPrefix("\"") && etag.hasSuffix("\""), "a strong ETag: \(etag)")
        XCTAssertNotEqual(etag, blue.headers[.eTag], "different bytes, different ETags")
        let sameBytes = try await broker.request(.get, "/tiles/13/2766/4935")
        XCTAssertEqual(sameBytes.headers[.eTag], etag, "same bytes, same ETag")

        let again = try await broker.request(.get, "/tiles/12/1383/2467", headers: [.ifNoneMatch: etag])
        XCTAssertEqual(again.status, .notModified)
        XCTAssertEqual(again.headers[.eTag], etag)
        XCTAssertEqual(again.body?.readableBytes ?? 0, 0, "a 304 carries no bytes")
        let listed = try await broker.request(.get, "/tiles/12/1383/2467", headers: [.ifNoneMatch: "\"other\", W/\(etag)"])
        XCTAssertEqual(listed.status, .notModified, "one of a list of ETags, weakly compared")
        let other = try await broker.request(.get, "/tiles/12/1383/2467", headers: [.ifNoneMatch: "\"stale\""])
        XCTAssertEqual(other.status, .ok, "an ETag of other bytes gets the tile")
        XCTAssertEqual(other.body.map { Data($0.readableBytesView) }, MBTilesFixture.red)
    }

    func testAJPEGFileIsServedAsJPEG() async throws {
        let broker = try await start(format: "jpg", tiles: [(12, 1383, 2467, Data([0xFF, 0xD8, 0xFF, 0xD9]))])
        let tile = try await broker.request(.get, "/tiles/12/1383/2467")
        XCTAssertEqual(tile.status, .ok)
        XCTAssertEqual(tile.headers[.contentType], "image/jpeg")
    }

    func testTilesOutsideTheFilesZoomsOrBoundsOrMissingFromItAre404() async throws {
        // A tile outside the bounds is in the file, to show the bounds are enforced, not only absence.
        let (red, blue) = (MBTilesFixture.red, MBTilesFixture.blue)
        let broker = try await start(tiles: [(12, 1383, 2467, red), (12, 0, 0, blue), (11, 691, 1233, red), (14, 5532, 9870, red)])
        for path in [
            "/tiles/12/0/0",  // in the file, outside its bounds
            "/tiles/11/691/1233",  // in the file, below minzoom
            "/tiles/14/5532/9870",  // in the file, above maxzoom
            "/tiles/12/1383/2469",  // inside the zooms, just south of the bounds
            "/tiles/13/2767/4936",  // inside zooms and bounds, not in the file
            "/tiles/12/1383/1628",  // the TMS row of a stored tile: rows are not taken as stored
            "/tiles/12/4096/2467", "/tiles/12/1383/4096",  // past the world at that zoom
            "/tiles/0/0/0", "/tiles/30/0/0", "/tiles/9999999999/0/0",
        ] {
            let response = try await broker.request(.get, path)
            XCTAssertEqual(response.status, .notFound, path)
            XCTAssertEqual(response.error?.code, .notFound, path)
        }
        XCTAssertEqual(broker.metric(#"broker_rejections_total{code="not-found"}"#), 11, "every refusal is counted")
    }

    func testBadCoordinatesAreRefusedWithoutA5xx() async throws {
        let broker = try await start()
        let refused: [String] = [
            "/tiles/a/1383/2467", "/tiles/12/x/2467", "/tiles/12/1383/y", "/tiles/-1/0/0", "/tiles/12/-1383/2467", "/tiles/+12/1383/2467",
            "/tiles/12/1383/2467.png", "/tiles/1.5/0/0", "/tiles/12/1383/%20", "/tiles/12/1383/2467%00", "/tiles/12/%2e%2e/2467",
            "/tiles/99999999999/0/0", "/tiles/12/99999999999999999999999999/2467", "/tiles/12/1383/18446744073709551617",
            "/tiles/\(String(repeating: "9", count: 4000))/0/0",
        ]
        for path in refused {
            let response = try await broker.request(.get, path)
            XCTAssertTrue([.badRequest, .notFound].contains(response.status), "\(path): \(response.status)")
            if response.status == .badRequest { XCTAssertEqual(response.error?.code, .badRequest, path) }
        }
        XCTAssertGreaterThanOrEqual(broker.metric(#"broker_rejections_total{code="bad-request"}"#) ?? 0, 10, "refusals are counted")
        for path in ["/tiles", "/tiles/12", "/tiles/12/1383", "/tiles/12/1383/2467/extra"] {
            let response = try await broker.request(.get, path)
            XCTAssertEqual(response.status, .notFound, path)
        }
        let post = try await broker.request(.post, "/tiles/12/1383/2467", body: "{}")
        XCTAssertEqual(post.status, .methodNotAllowed, "tiles are only read")
        XCTAssertEqual(post.headers[.allow], "GET")
    }

    func testWithoutATilesFileThereAreNoTiles() async throws {
        let broker = try await startBroker()
        live = broker
        let response = try await broker.request(.get, "/tiles/12/1383/2467")
        XCTAssertEqual(response.status, .notFound)
        XCTAssertEqual(response.error?.code, .notFound)
    }

    func testAFileTheBrokerCannotServeStopsItFromStarting() async throws {
        let webp = folder.appendingPathComponent("webp.mbtiles").path
        try MBTilesFixture.make(at: webp, format: "webp", tiles: [(12, 1383, 2467, MBTilesFixture.red)])
        let empty = folder.appendingPathComponent("empty.mbtiles").path
        try MBTilesFixture.make(at: empty, zooms: nil, tiles: [])
        let badBounds = folder.appendingPathComponent("bounds.mbtiles").path
        try MBTilesFixture.make(at: badBounds, bounds: "west,south", tiles: [(12, 1383, 2467, MBTilesFixture.red)])
        let notSQLite = folder.appendingPathComponent("text.mbtiles").path
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: notSQLite))
        for (path, expected) in [
            (webp, "'webp' tiles"), (empty, "has no tiles"), (badBounds, "bounds must be"), (notSQLite, "not a readable MBTiles file"),
            (folder.appendingPathComponent("missing.mbtiles").path, "cannot be read"),
        ] {
            do {
                let broker = try await startBroker { $0.map.tilesFile = path }
                try await broker.stop()
                XCTFail("\(path) should stop the broker from starting")
            } catch {
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing.mbtiles").path), "opened read-only: nothing created")
    }
}
