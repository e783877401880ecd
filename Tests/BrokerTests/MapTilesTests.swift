import BrokerProtocol
import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker
@testable import TrackingPage

/// `map_tiles_file`: an MBTiles file the broker serves at `/tiles/{z}/{x}/{y}`, so that the donor's map needs
/// no third party. Each test makes its own small file of 1×1 PNGs.
final class MapTilesTests: XCTestCase {
    /// Two different 1×1 PNGs (red, blue).
    static let red = Data([
        137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 144, 119, 83, 222, 0, 0, 0,
        12, 73, 68, 65, 84, 120, 156, 99, 56, 33, 39, 7, 0, 2, 182, 1, 5, 52, 166, 117, 170, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
    ])
    static let blue = Data([
        137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 144, 119, 83, 222, 0, 0, 0,
        12, 73, 68, 65, 84, 120, 156, 99, 144, 147, 59, 1, 0, 1, 98, 1, 5, 17, 27, 163, 33, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
    ])
    /// Buenos Aires, around the browser test's trip; at zoom 12 it is column 1383, rows 2467-2468 (from the north).
    static let bounds = "-58.44,-34.625,-58.36,-34.57"

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

    /// Writes an MBTiles file: `tiles` are (z, x, y counted from the north, bytes); rows are stored flipped (TMS).
    static func makeMBTiles(at path: String, format: String = "png", bounds: String? = bounds, zooms: ClosedRange<Int>? = 12...13,
                            tiles: [(Int, Int, Int, Data)]) throws {
        let database = try DatabaseQueue(path: path)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE metadata (name TEXT, value TEXT)")
            try db.execute(sql: "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
            var metadata = ["name": "test", "format": format]
            metadata["bounds"] = bounds
            if let zooms {
                metadata["minzoom"] = String(zooms.lowerBound)
                metadata["maxzoom"] = String(zooms.upperBound)
            }
            for (name, value) in metadata {
                try db.execute(sql: "INSERT INTO metadata VALUES (?, ?)", arguments: [name, value])
            }
            for (z, x, y, data) in tiles {
                try db.execute(sql: "INSERT INTO tiles VALUES (?, ?, ?, ?)", arguments: [z, x, (1 << z) - 1 - y, data])
            }
        }
    }

    private func start(format: String = "png", tiles: [(Int, Int, Int, Data)]? = nil) async throws -> LiveBroker {
        let path = folder.appendingPathComponent("map.mbtiles").path
        try Self.makeMBTiles(at: path, format: format, tiles: tiles ?? [(12, 1383, 2467, Self.red), (12, 1383, 2468, Self.blue), (13, 2766, 4935, Self.red)])
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
        XCTAssertEqual(red.body.map { Data($0.readableBytesView) }, Self.red)
        let blue = try await broker.request(.get, "/tiles/12/1383/2468")
        XCTAssertEqual(blue.body.map { Data($0.readableBytesView) }, Self.blue, "rows are counted from the north: the file's TMS rows are flipped")
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
        XCTAssertEqual(other.body.map { Data($0.readableBytesView) }, Self.red)
    }

    func testAJPEGFileIsServedAsJPEG() async throws {
        let broker = try await start(format: "jpg", tiles: [(12, 1383, 2467, Data([0xFF, 0xD8, 0xFF, 0xD9]))])
        let tile = try await broker.request(.get, "/tiles/12/1383/2467")
        XCTAssertEqual(tile.status, .ok)
        XCTAssertEqual(tile.headers[.contentType], "image/jpeg")
    }

    func testTilesOutsideTheFilesZoomsOrBoundsOrMissingFromItAre404() async throws {
        // A tile outside the bounds is in the file, to show the bounds are enforced, not only absence.
        let broker = try await start(tiles: [(12, 1383, 2467, Self.red), (12, 0, 0, Self.blue), (11, 691, 1233, Self.red), (14, 5532, 9870, Self.red)])
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
        try Self.makeMBTiles(at: webp, format: "webp", tiles: [(12, 1383, 2467, Self.red)])
        let empty = folder.appendingPathComponent("empty.mbtiles").path
        try Self.makeMBTiles(at: empty, zooms: nil, tiles: [])
        let badBounds = folder.appendingPathComponent("bounds.mbtiles").path
        try Self.makeMBTiles(at: badBounds, bounds: "west,south", tiles: [(12, 1383, 2467, Self.red)])
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

    func testTheFileIsOpenedReadOnly() throws {
        let path = folder.appendingPathComponent("map.mbtiles").path
        try Self.makeMBTiles(at: path, tiles: [(12, 1383, 2467, Self.red)])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let tiles = try MBTiles(path: path)
        XCTAssertEqual(tiles.minZoom, 12)
        XCTAssertEqual(tiles.maxZoom, 13)
        XCTAssertEqual(tiles.contentType, "image/png")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }
}
