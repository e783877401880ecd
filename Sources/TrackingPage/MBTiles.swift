import Crypto
import Foundation
import GRDB

/// A map in an MBTiles file (https://github.com/mapbox/mbtiles-spec): SQLite with a `tiles` table
/// (`zoom_level`, `tile_column`, `tile_row` counted from the south (TMS), `tile_data`) and a `metadata` table
/// (`name`, `value`: `format`, `minzoom`, `maxzoom`, `bounds`). Opened read-only through GRDB.
package struct MBTiles: Sendable {
    struct Unusable: Error, CustomStringConvertible {
        let description: String
    }

    /// One tile's bytes and what identifies them for caches.
    struct Tile: Sendable {
        let data: Data
        /// A strong ETag: a digest of the bytes, so that a file replaced under the broker changes it.
        var etag: String { "\"" + SHA256.hash(data: data).prefix(16).map { String(format: "%02x", $0) }.joined() + "\"" }
    }

    /// The tiles' content type, from `metadata.format`.
    let contentType: String
    let minZoom: Int
    let maxZoom: Int
    /// West, south, east, north in degrees (the whole world when the file does not say).
    let bounds: (west: Double, south: Double, east: Double, north: Double)
    private let database: DatabaseQueue

    /// Opens `path` read-only and reads its metadata; throws, saying what is wrong, when it is not a usable
    /// MBTiles file of PNG or JPEG tiles.
    init(path: String) throws {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw Unusable(description: "map_tiles_file \(path) cannot be read")
        }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            let (metadata, zooms) = try database.read { db -> ([String: String], (Int?, Int?)) in
                let rows = try Row.fetchAll(db, sql: "SELECT name, value FROM metadata")
                var metadata: [String: String] = [:]
                for row in rows {
                    if let name = row["name"] as String?, let value = row["value"] as String? { metadata[name] = value }
                }
                // MIN and MAX of no rows are NULL: nil.
                let low = try Int.fetchOne(db, sql: "SELECT MIN(zoom_level) FROM tiles")
                let high = try Int.fetchOne(db, sql: "SELECT MAX(zoom_level) FROM tiles")
                return (metadata, (low, high))
            }
            switch metadata["format"]?.lowercased() {
            case "png": contentType = "image/png"
            case "jpg", "jpeg": contentType = "image/jpeg"
            default:
                throw Unusable(description: "map_tiles_file \(path) holds '\(metadata["format"] ?? "no format")' tiles; the broker serves png or jpg")
            }
            guard let low = metadata["minzoom"].flatMap({ Int($0) }) ?? zooms.0, let high = metadata["maxzoom"].flatMap({ Int($0) }) ?? zooms.1,
                0 <= low, low <= high, high <= 30
            else { throw Unusable(description: "map_tiles_file \(path) has no tiles, or minzoom/maxzoom outside 0...30") }
            minZoom = low
            maxZoom = high
            let edges = (metadata["bounds"] ?? "-180,-85.0511,180,85.0511").split(separator: ",").compactMap {
                Double($0.trimmingCharacters(in: .whitespaces))
            }
            guard edges.count == 4, edges[0] < edges[2], edges[1] < edges[3] else {
                throw Unusable(description: "map_tiles_file \(path): metadata bounds must be 'west,south,east,north' in degrees")
            }
            bounds = (edges[0], edges[1], edges[2], edges[3])
        } catch let error as Unusable {
            throw error
        } catch {
            throw Unusable(description: "map_tiles_file \(path) is not a readable MBTiles file: \(error)")
        }
    }

    /// The tile at zoom `z`, column `x` and row `y` counted from the north (as Leaflet asks), or `nil` when it is
    /// outside the file's zooms or bounds or not in the file.
    func tile(z: Int, x: Int, y: Int) async throws -> Tile? {
        guard (minZoom...maxZoom).contains(z) else { return nil }
        let count = 1 << z
        guard (0..<count).contains(x), (0..<count).contains(y), overlapsBounds(z: z, x: x, y: y) else { return nil }
        let data = try await database.read { db in
            try Data.fetchOne(
                db, sql: "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                arguments: [z, x, count - 1 - y])
        }
        return data.map { Tile(data: $0) }
    }

    private func overlapsBounds(z: Int, x: Int, y: Int) -> Bool {
        let count = Double(1 << z)
        let west = Double(x) / count * 360 - 180, east = Double(x + 1) / count * 360 - 180
        let latitude = { (row: Double) in atan(sinh(Double.pi * (1 - 2 * row / count))) * 180 / Double.pi }
        let north = latitude(Double(y)), south = latitude(Double(y + 1))
        return west < bounds.east && east > bounds.west && south < bounds.north && north > bounds.south
    }
}
