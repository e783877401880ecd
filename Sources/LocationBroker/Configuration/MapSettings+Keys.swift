import Foundation
import TrackingPage

extension MapSettings {
    /// The settings, kept together (ConfigurationKey.all lists them after the others).
    static let keys: [ConfigurationKey] = [
        ConfigurationKey.text(
            "leaflet_folder", \.map.leafletFolder, allowed: "an absolute path",
            "Folder with Leaflet's leaflet.js, leaflet.css and images/ (Debian's libjs-leaflet puts it at the default)."
        ) { $0.hasPrefix("/") ? nil : "must be an absolute path, not '\($0)'" },
        ConfigurationKey.text(
            "map_tiles_file", \.map.tilesFile, allowed: "a readable MBTiles file of `png` or `jpg` tiles",
            example: "/var/lib/location-broker/map.mbtiles",
            "MBTiles file the broker serves at /tiles/{z}/{x}/{y} for the tracking page; unset: no tiles from the broker."),
        ConfigurationKey.parsed(
            "map_tiles_url", \.map.tilesURL,
            allowed: "`https://host[:port]/path/{z}/{x}/{y}[.png][?query]` (or `http://`), one host (no `{s}`), no quotes, spaces, `;` or `,`",
            example: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
            "Tile server URL template; the page loads tiles from that one origin, which sees where donors look (needs map_tiles_attribution).",
            show: \.text
        ) { value in
            Result { try TileURLTemplate(value) }.mapError { ConfigurationKey.Refusal("\($0)") }
        },
        ConfigurationKey.parsed(
            "map_tiles_attribution", \.map.tilesAttribution, allowed: "one line of plain text, at most 300 characters",
            example: "© OpenStreetMap contributors", "Attribution text shown under map_tiles_url's tiles, as plain text."
        ) { value in
            if value.trimmingCharacters(in: .whitespaces).isEmpty { return .failure("must not be empty") }
            if value.count > 300 || value.contains(where: \.isNewline) { return .failure("must be one line of at most 300 characters") }
            return .success(value)
        },
    ]
}
