import BrokerProtocol
import Hummingbird

/// `GET /track/{donation}`: the donor's tracking page, and the stylesheet and script it loads.
///
/// The page is static: the same bytes for every donation. Its script reads the donation id from the path and
/// the watch link's token from the URL fragment (`#token=...`, which browsers never send to a server), takes
/// the token out of the address bar and the history at once (`history.replaceState`), then watches the
/// donation over `/v1/ws`. Everything it needs comes from the broker: no CDN, no map tiles, no
/// fonts, so it works on a network with no internet, and its Content-Security-Policy allows nothing else.
struct TrackingPage: Sendable {
    static let stylesheetPath = "/assets/tracking-page.css"
    static let scriptPath = "/assets/tracking-page.js"

    /// Only the broker's own files and connections; no inline script or style.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    private static let htmlBytes = ByteBuffer(string: html)
    private static let stylesheetBytes = ByteBuffer(string: stylesheet)
    private static let scriptBytes = ByteBuffer(string: script)

    func register(on router: Router<BrokerRequestContext>) {
        router.get("track/:donation") { _, context -> Response in
            let id = context.parameters.get("donation") ?? ""
            guard DonationID.isValid(id) else {
                let rule = "a donation id is 1 to 128 characters of letters, digits, '.', '_', ':' or '-'"
                return JSONResponse.error(.notFound, .init(.notFound, "no tracking page here: \(rule)"))
            }
            var response = Self.file(Self.htmlBytes, type: "text/html; charset=utf-8")
            response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
            return response
        }
        router.get("assets/tracking-page.css") { _, _ in
            Self.file(Self.stylesheetBytes, type: "text/css; charset=utf-8")
        }
        router.get("assets/tracking-page.js") { _, _ in
            Self.file(Self.scriptBytes, type: "text/javascript; charset=utf-8")
        }
    }

    /// A static file; revalidated on each load so a broker upgrade is seen at once.
    private static func file(_ bytes: ByteBuffer, type: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "no-cache", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: bytes))
    }
}
