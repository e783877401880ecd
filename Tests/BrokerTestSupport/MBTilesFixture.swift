import Foundation
import GRDB

/// Small MBTiles files for the map tiles' tests: the reader alone (TrackingPageTests) and the broker serving them
/// (MapTilesTests, TrackingMapTests), written the same way in both.
enum MBTilesFixture {
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

    /// Writes an MBTiles file: `tiles` are (z, x, y counted from the north, bytes); rows are stored flipped (TMS).
    /// A nil `bounds` or `zooms` leaves that metadata out.
    static func make(at path: String, format: String = "png", bounds: String? = bounds, zooms: ClosedRange<Int>? = 12...13,
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
}
