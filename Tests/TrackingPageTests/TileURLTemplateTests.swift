import XCTest

@testable import TrackingPage

/// `map_tiles_url`: a template names exactly one origin, the one the page's Content-Security-Policy adds for
/// images, or it is refused (what the page then allows: TrackingMapTests, against a live broker).
final class TileURLTemplateTests: XCTestCase {
    func testATileServerTemplateNamesExactlyOneOriginOrIsRefused() throws {
        let good = try TileURLTemplate("https://tile.openstreetmap.org/{z}/{x}/{y}.png")
        XCTAssertEqual(good.origin, "https://tile.openstreetmap.org")
        XCTAssertEqual(try TileURLTemplate("HTTP://Tiles.Local:8080/{z}/{x}/{y}").origin, "http://tiles.local:8080")
        for bad in [
            "https://{s}.tile.openstreetmap.org/{z}/{x}/{y}.png",  // several hosts
            "https://tiles.example.org; script-src *; /{z}/{x}/{y}",  // a CSP injection in the host
            "https://tiles.example.org/{z}/{x}/{y};script-src",  // ... or in the path
            "https://tiles.example.org/{z}/{x}/{y}.png https://evil.example",
            "https://tiles.example.org/{z}/{x}/{y}\"onerror=\"x", "https://tiles.example.org/{z}/{x}/{y},https://evil.example",
            "https://user:pw@tiles.example.org/{z}/{x}/{y}", "https:///{z}/{x}/{y}", "https://.example.org/{z}/{x}/{y}",
            "javascript:alert(1)//{z}/{x}/{y}", "data:image/png,{z}{x}{y}", "//tiles.example.org/{z}/{x}/{y}", "/tiles/{z}/{x}/{y}",
            "https://tiles.example.org/{z}/{x}.png", "https://tiles.example.org/{x}/{y}", "",
        ] {
            XCTAssertThrowsError(try TileURLTemplate(bad), bad)
        }
    }
}
