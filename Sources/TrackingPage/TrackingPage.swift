import BrokerHTTP
import BrokerProtocol
import Hummingbird

/// `GET /track/{donation}`: the donor's tracking page, and the stylesheet and script it loads (files in
/// Resources/page/, compiled in: ``Files``).
///
/// The page is the same bytes for every donation. Its script reads the donation id from the path and
/// the watch link's token from the URL fragment (`#token=...`, which browsers never send to a server), takes
/// the token out of the address bar and the history at once (`history.replaceState`), then watches the
/// donation over `/v1/ws`. It draws the trip with Leaflet, served by the broker from `leaflet_folder`, on the
/// tiles of `map_tiles_file` (served by the broker too) or of `map_tiles_url` (the one other origin its
/// Content-Security-Policy then allows, for images only), or on a plain background without either. Without
/// Leaflet the page still shows every fact as text. Where the browser and the broker can, it offers "Notify me"
/// (Web Push, through the service worker at ``pushWorkerPath``).
package struct TrackingPage: Sendable {
    static let stylesheetPath = "/assets/tracking-page.css"
    static let scriptPath = "/assets/tracking-page.js"
    /// The JavaScript client the page's script imports (clients/javascript/location-broker-client.js).
    static let clientPath = "/assets/location-broker-client.js"
    /// The service worker that shows the broker's pushes (Resources/page/push-worker.js). Under /track/ so that it
    /// may take the scope of a donation's page, which the page registers it with.
    static let pushWorkerPath = "/track/push-worker.js"
    /// The worker fetches nothing, so its own policy allows nothing.
    static let pushWorkerContentSecurityPolicy = "default-src 'none'"

    /// What the page's map draws on.
    struct MapSource: Sendable, Equatable {
        /// The tile URL template Leaflet asks, or `nil` for a plain background.
        var tiles: String?
        /// The origin other than the broker's that the page may load images from (`map_tiles_url`'s).
        var imageOrigin: String?
        var attribution: String?
        var minZoom: Int?
        var maxZoom: Int?
        /// west,south,east,north of a tiles file, so that Leaflet asks for nothing outside it.
        var bounds: String?
    }

    let contentSecurityPolicy: String
    private let htmlBytes: ByteBuffer
    private static let stylesheetBytes = ByteBuffer(string: Files.stylesheet)
    private static let scriptBytes = ByteBuffer(string: script)
    private static let clientBytes = ByteBuffer(string: Files.client)
    private static let sourceMapBytes = ByteBuffer(string: sourceMap)
    private static let pushWorkerBytes = ByteBuffer(string: Files.pushWorker)

    /// - Parameters:
    ///   - leaflet: whether Leaflet is served (the page links it only then).
    ///   - map: the tiles the map draws on.
    init(leaflet: Bool, map: MapSource = MapSource()) {
        contentSecurityPolicy = Self.contentSecurityPolicy(imageOrigin: map.imageOrigin)
        htmlBytes = ByteBuffer(string: Self.html(leaflet: leaflet, map: map))
    }

    /// Only the broker's own files, connections and service worker, plus `imageOrigin` for images; no inline script or
    /// style.
    static func contentSecurityPolicy(imageOrigin: String?) -> String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:\(imageOrigin.map { " " + $0 } ?? ""); "
            + "connect-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    func register(on router: Router<BrokerRequestContext>) {
        // Before `track/:donation`, whose pattern the worker's name fits too.
        router.get(RouterPath(String(Self.pushWorkerPath.dropFirst()))) { _, _ in
            var response = Self.file(Self.pushWorkerBytes, type: "text/javascript; charset=utf-8")
            response.headers[.contentSecurityPolicy] = Self.pushWorkerContentSecurityPolicy
            return response
        }
        router.get("track/:donation") { _, context -> Response in
            let id = context.parameters.get("donation") ?? ""
            guard DonationID.isValid(id) else {
                let rule = "a donation id is 1 to 128 characters of letters, digits, '.', '_', ':' or '-'"
                return JSONResponse.error(.notFound, .init(.notFound, "no tracking page here: \(rule)"))
            }
            var response = Self.file(htmlBytes, type: "text/html; charset=utf-8")
            response.headers[.contentSecurityPolicy] = contentSecurityPolicy
            return response
        }
        router.get("assets/tracking-page.css") { _, _ in
            Self.file(Self.stylesheetBytes, type: "text/css; charset=utf-8")
        }
        router.get("assets/tracking-page.js") { _, _ in
            Self.file(Self.scriptBytes, type: "text/javascript; charset=utf-8")
        }
        router.get(RouterPath(String(Self.clientPath.dropFirst()))) { _, _ in
            Self.file(Self.clientBytes, type: "text/javascript; charset=utf-8")
        }
        // Read by developer tools only, never by the page: the files' names and lines behind the script.
        router.get(RouterPath("assets/" + Self.sourceMapName)) { _, _ in
            Self.file(Self.sourceMapBytes, type: "application/json; charset=utf-8")
        }
    }

    /// A static file; revalidated on each load so a broker upgrade is seen at once.
    static func file(_ bytes: ByteBuffer, type: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "no-cache", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: bytes))
    }
}
