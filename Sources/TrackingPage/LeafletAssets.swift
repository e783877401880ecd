import BrokerHTTP
import Foundation
import Hummingbird
import Logging

/// Leaflet's files, read once at start from `leaflet_folder` (Debian's `libjs-leaflet` by default) and served
/// under `/assets/leaflet/`.
///
/// Only the files Leaflet needs have routes, each bound to a fixed name in the folder: a request's path never
/// becomes a file name, so `..`, absolute paths and listings have nothing to reach.
package struct LeafletAssets: Sendable {
    /// Where the page finds Leaflet.
    static let prefix = "/assets/leaflet/"
    /// The files served, relative to the folder and to `prefix`, and their content types (`leaflet.js` is read
    /// from `leaflet.min.js` when there is one).
    package static let files: [(name: String, type: String)] = [
        ("leaflet.js", "text/javascript; charset=utf-8"),
        ("leaflet.css", "text/css; charset=utf-8"),
        ("images/layers.png", "image/png"),
        ("images/layers-2x.png", "image/png"),
        ("images/marker-icon.png", "image/png"),
        ("images/marker-icon-2x.png", "image/png"),
        ("images/marker-shadow.png", "image/png"),
    ]

    private let contents: [String: ByteBuffer]

    /// Reads the files from `folder`; `nil` (and one warning line) when leaflet.js or leaflet.css cannot be read,
    /// so that the page goes on without the street map.
    static func load(folder: String, logger: Logger) -> LeafletAssets? {
        var contents: [String: ByteBuffer] = [:]
        for file in files {
            // The minified build when the folder has one (Debian's does): a third of the bytes for donors' phones.
            let candidates = file.name == "leaflet.js" ? ["leaflet.min.js", "leaflet.js"] : [file.name]
            for name in candidates where contents[file.name] == nil {
                if let data = FileManager.default.contents(atPath: URL(fileURLWithPath: folder).appendingPathComponent(name).path) {
                    contents[file.name] = ByteBuffer(data: data)
                }
            }
        }
        guard contents["leaflet.js"] != nil, contents["leaflet.css"] != nil else {
            logger.warning(
                "no Leaflet in leaflet_folder: the tracking page shows the trip without a street map; install Debian's libjs-leaflet or set leaflet_folder",
                metadata: ["leaflet_folder": "\(folder)"])
            return nil
        }
        return LeafletAssets(contents: contents)
    }

    func register(on router: Router<BrokerRequestContext>) {
        for file in Self.files {
            guard let bytes = contents[file.name] else { continue }
            router.get(RouterPath(Self.prefix + file.name)) { _, _ in
                TrackingPage.file(bytes, type: file.type)
            }
        }
    }
}
