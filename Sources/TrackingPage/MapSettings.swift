import BrokerCore
import Foundation

/// The tracking page's street map: where Leaflet is, and the tiles it draws (docs/CONFIGURATION.md, "Map").
///
/// Tiles are opt-in: without `tilesFile` or `tilesURL` the page draws the trip on a plain background and loads
/// nothing from another host. `tilesFile` keeps the donor's whereabouts on the broker; `tilesURL` tells a tile
/// server which area the donor looks at (see docs/SECURITY.md, "The tracking page's map").
package struct MapSettings: Sendable, Equatable {
    /// Debian's `libjs-leaflet` puts Leaflet here.
    package static let debianLeafletFolder = "/usr/share/javascript/leaflet"

    /// The folder holding `leaflet.js`, `leaflet.css` and `images/`; the broker serves those files only.
    package var leafletFolder = Self.debianLeafletFolder
    /// An MBTiles file (SQLite) the broker serves at `/tiles/{z}/{x}/{y}`.
    package var tilesFile: String?
    /// A tile server's URL template; the page's Content-Security-Policy then allows its origin for images.
    package var tilesURL: TileURLTemplate?
    /// The text the page shows for `tilesURL`'s tiles (their licence usually requires it).
    package var tilesAttribution: String?

    /// Refuses combinations the page cannot honour.
    package func validate() throws {
        if tilesFile != nil && tilesURL != nil {
            throw ConfigurationError(description: "map_tiles_file and map_tiles_url are both set; set one of them (the file keeps donors' whereabouts on the broker)")
        }
        if tilesURL != nil && tilesAttribution == nil {
            throw ConfigurationError(description: "map_tiles_url needs map_tiles_attribution: the text the tile server's licence asks the page to show (for example: © OpenStreetMap contributors)")
        }
        if tilesAttribution != nil && tilesURL == nil {
            throw ConfigurationError(description: "map_tiles_attribution is set but map_tiles_url is not: it is shown under that server's tiles")
        }
    }
}

/// A tile server's URL template, `https://host[:port]/path/{z}/{x}/{y}[.png]`, checked so that it names exactly
/// one origin and can go into a Content-Security-Policy and an HTML attribute as it is.
package struct TileURLTemplate: Sendable, Equatable, CustomStringConvertible {
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// The template as given.
    package let text: String
    /// `scheme://host[:port]`, the one origin the page may load images from.
    let origin: String

    package var description: String { text }

    package init(_ text: String) throws {
        let problem = "must be an https:// (or http://) URL template naming one host, with {z}, {x} and {y} in its path"
        let lower = text.lowercased()
        let scheme = lower.hasPrefix("https://") ? "https://" : lower.hasPrefix("http://") ? "http://" : nil
        guard let scheme else { throw Invalid(description: "\(problem), not '\(text)'") }
        let rest = text.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        // Host and port only: no user info, no {s} subdomains (the CSP allows exactly one origin).
        let hostCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:")
        guard !authority.isEmpty, authority.allSatisfy(hostCharacters.contains), !authority.hasPrefix("."), !authority.hasPrefix(":")
        else { throw Invalid(description: "\(problem); its host must be one name (no {s}, no user@), not '\(authority)'") }
        // The path goes into an attribute and Leaflet's template: no quotes, spaces, CSP separators or markup.
        let pathCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/{}@!$&()*+=%?")
        guard path.allSatisfy(pathCharacters.contains)
        else { throw Invalid(description: "\(problem); its path has a character that is not allowed (quotes, spaces, ';', ',', '<' or '>'), in '\(text)'") }
        for placeholder in ["{z}", "{x}", "{y}"] where !path.contains(placeholder) {
            throw Invalid(description: "\(problem); \(placeholder) is missing in '\(text)'")
        }
        self.text = text
        origin = scheme + authority.lowercased()
    }
}

extension MapSettings {
    /// No tiles, and Leaflet where Debian puts it.
    package static let defaults = MapSettings()
}
