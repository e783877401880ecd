import Foundation

extension TrackingPage {
    /// The page (Resources/page/page.html). Facts are text first (headline, notice, the details list, the event log);
    /// the map repeats them as a picture with a text description. Live regions: the notice (`role=status`), the
    /// event log (`role=log`) and the final message (`role=alert`), so a screen reader announces state changes,
    /// arrival and the end of tracking without the donor looking for them. Leaflet's files are linked only when
    /// the broker serves them (`{{leaflet}}`); the map's tiles, attribution, zooms and bounds are data attributes of
    /// `#map` (`{{map}}`), escaped.
    static func html(leaflet: Bool, map: MapSource) -> String {
        let leafletTags =
            leaflet
            ? #"<link rel="stylesheet" href="\#(LeafletAssets.prefix)leaflet.css">"# + "\n"
                + #"<script src="\#(LeafletAssets.prefix)leaflet.js" defer></script>"# + "\n" : ""
        var mapAttributes = ""
        for (name, value) in [
            ("tiles", map.tiles), ("attribution", map.attribution), ("min-zoom", map.minZoom.map(String.init)),
            ("max-zoom", map.maxZoom.map(String.init)), ("bounds", map.bounds),
        ] {
            if let value { mapAttributes += " data-\(name)=\"\(escapeAttribute(value))\"" }
        }
        return Files.html
            .replacingOccurrences(of: "{{leaflet}}\n", with: leafletTags)
            .replacingOccurrences(of: "{{map}}", with: mapAttributes)
    }

    /// `text` safe inside a double-quoted HTML attribute.
    static func escapeAttribute(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
