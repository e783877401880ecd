import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import TrackingPage

/// `map_tiles_file` as the reader opens it, without a broker (the tiles served: MapTilesTests).
final class MBTilesTests: XCTestCase {
    private var folder: URL!

    override func setUp() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mbtiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testTheFileIsOpenedReadOnly() throws {
        let path = folder.appendingPathComponent("map.mbtiles").path
        try MBTilesFixture.make(at: path, tiles: [(12, 1383, 2467, MBTilesFixture.red)])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let tiles = try MBTiles(path: path)
        XCTAssertEqual(tiles.minZoom, 12)
        XCTAssertEqual(tiles.maxZoom, 13)
        XCTAssertEqual(tiles.contentType, "image/png")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }
}
