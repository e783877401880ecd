import BrokerProtocol
import HTTPTypes
import HummingbirdTesting
import NIOCore
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker
@testable import TrackingPage

/// `GET /track/{donation}` serves a page that needs nothing but the broker, and that a screen reader can follow.
/// The page's behaviour in a real browser is checked by scripts/browser-test; its map by TrackingMapTests; its
/// reconnection by the library's rules, without a broker, by PageReconnectionTests (Tests/TrackingPageTests).
final class TrackingPageTests: XCTestCase {
    private var live: LiveBroker!

    override func setUp() async throws {
        live = try await startBroker()
    }

    override func tearDown() async throws {
        try await live.stop()
    }

    private func text(_ response: TestClient.Response) -> String {
        String(buffer: response.body ?? ByteBuffer())
    }

    func testThePageIsServedWithItsLiveRegionsAndElements() async throws {
        let response = try await live.request(.get, "/track/d-1")
        XCTAssertEqual(response.status, .ok)
        XCTAssertEqual(response.headers[.contentType], "text/html; charset=utf-8")
        XCTAssertEqual(response.headers[.xContentTypeOptions], "nosniff")
        let csp = try XCTUnwrap(response.headers[.contentSecurityPolicy])
        XCTAssertTrue(csp.contains("default-src 'none'"), csp)
        XCTAssertTrue(csp.contains("connect-src 'self'"), csp)
        XCTAssertTrue(csp.contains("worker-src 'self'"), "the notification worker comes from the broker only: \(csp)")
        XCTAssertFalse(csp.contains("unsafe-inline"), csp)
        let html = text(response)
        XCTAssertTrue(html.hasPrefix("<!doctype html>"))
        XCTAssertTrue(html.contains(#"<html lang="en">"#))
        XCTAssertTrue(html.contains(#"name="viewport" content="width=device-width, initial-scale=1""#), "fits a phone")
        // Live regions: the notice, the event log, and the final message.
        XCTAssertTrue(html.contains(#"id="notice" class="notice" role="status" aria-live="polite""#))
        XCTAssertTrue(html.contains(#"id="events" class="events" role="log" aria-live="polite""#))
        XCTAssertTrue(html.contains(#"id="final" class="final" role="alert""#))
        // The facts as text, and the map as a described picture.
        for id in ["headline", "destination", "distance", "eta", "age", "presence", "heading", "home", "institution", "connection"] {
            XCTAssertTrue(html.contains(#"id="\#(id)""#), "the page has #\(id)")
        }
        XCTAssertTrue(html.contains(#"<div id="map" class="map" role="img" aria-labelledby="map-title map-desc""#))
        XCTAssertTrue(html.contains(#"<p id="map-desc" class="map-desc">"#), "the map's description is text")
        // The script draws home, institution, volunteer, trail and route with Leaflet.
        let js = text(try await live.request(.get, TrackingPage.scriptPath))
        for layer in ["home-marker", "institution-marker", "volunteer-marker", "className: 'trail'", "className: 'route'", "target-ring"] {
            XCTAssertTrue(js.contains(layer), "the map draws \(layer)")
        }
        // A module script (deferred by nature, strict, nothing global), which imports the JavaScript client.
        XCTAssertTrue(html.contains(#"<script type="module" src="\#(TrackingPage.scriptPath)"></script>"#))
        XCTAssertTrue(html.contains(#"<link rel="stylesheet" href="\#(TrackingPage.stylesheetPath)">"#))
    }

    func testThePageNeedsNothingButTheBroker() async throws {
        let page = try await live.request(.get, "/track/d-1")
        let stylesheet = try await live.request(.get, TrackingPage.stylesheetPath)
        let script = try await live.request(.get, TrackingPage.scriptPath)
        let client = try await live.request(.get, TrackingPage.clientPath)
        XCTAssertEqual(client.status, .ok)
        XCTAssertEqual(stylesheet.status, .ok)
        XCTAssertEqual(stylesheet.headers[.contentType], "text/css; charset=utf-8")
        XCTAssertEqual(script.status, .ok)
        XCTAssertEqual(script.headers[.contentType], "text/javascript; charset=utf-8")
        let worker = try await live.request(.get, TrackingPage.pushWorkerPath)
        for (name, served) in [
            ("page", text(page)), ("stylesheet", text(stylesheet)), ("script", text(script)), ("client", text(client)),
            ("notification worker", text(worker)),
        ] {
            // SVG's namespace is a name, not an address anything is loaded from.
            let body = served.replacingOccurrences(of: "'http://www.w3.org/2000/svg'", with: "")
            XCTAssertFalse(body.isEmpty, name)
            XCTAssertFalse(body.contains("http://"), "the \(name) names no external address")
            XCTAssertFalse(body.contains("https://"), "the \(name) names no external address")
            XCTAssertFalse(body.contains("@import"), name)
            XCTAssertFalse(body.contains("url("), "the \(name) loads no external image or font")
        }
        // Every resource the page loads is the broker's own (or inline data).
        let html = text(page)
        for attribute in ["src=\"", "href=\""] {
            var rest = html[...]
            while let start = rest.range(of: attribute) {
                let value = rest[start.upperBound...].prefix { $0 != "\"" }
                XCTAssertTrue(value.hasPrefix("/") || value.hasPrefix("data:"), "\(attribute)\(value) is the broker's own")
                rest = rest[start.upperBound...]
            }
        }
        // The script watches the donation over the broker's WebSocket, with the token from the fragment, through the
        // JavaScript client (which sends the token as `?token=`, subscribes, and asks for what was missed).
        let js = text(script)
        let library = text(client)
        XCTAssertTrue(js.contains("'/v1/ws'"))
        XCTAssertTrue(js.contains("token: () => token,"))
        XCTAssertTrue(library.contains("'token=' + encodeURIComponent(token)"))
        XCTAssertTrue(js.contains("location.hash"))
        XCTAssertTrue(
            js.contains("history.replaceState(null, '', location.pathname + location.search)"),
            "the token leaves the address bar once read (checked in a browser by scripts/browser-test)")
        XCTAssertTrue(library.contains("type: 'subscribe'"))
        XCTAssertTrue(library.contains("frame.since = this.highestSeq"), "reconnects ask for what was missed")
        XCTAssertFalse(js.contains("innerHTML"), "text reaches the page only through textContent")
        XCTAssertFalse(library.contains("innerHTML"), "the client writes nothing into the page")
    }

    func testTheNotificationWorkerIsServedAsAScriptOfItsOwn() async throws {
        let worker = try await live.request(.get, TrackingPage.pushWorkerPath)
        XCTAssertEqual(worker.status, .ok)
        XCTAssertEqual(worker.headers[.contentType], "text/javascript; charset=utf-8", "a service worker must be served as JavaScript")
        XCTAssertEqual(worker.headers[.cacheControl], "no-cache", "a broker upgrade reaches the worker at once")
        XCTAssertEqual(worker.headers[.contentSecurityPolicy], "default-src 'none'", "the worker loads and connects to nothing")
        let js = text(worker)
        XCTAssertTrue(js.contains("addEventListener('push'"))
        XCTAssertTrue(js.contains("addEventListener('notificationclick'"))
        XCTAssertTrue(js.contains("renotify: true"))
        XCTAssertFalse(js.contains("fetch("), "the worker asks nothing of any server")
        XCTAssertFalse(js.contains("Storage"), "the worker keeps nothing")
        XCTAssertFalse(js.contains("Authorization"), "the worker holds no credential: the watch token never reaches it")
        // The page offers notifications with it, through the routes of the broker only, the token in a header.
        let script = text(try await live.request(.get, TrackingPage.scriptPath))
        XCTAssertTrue(script.contains("const PUSH_WORKER_PATH = '\(TrackingPage.pushWorkerPath)';"))
        XCTAssertTrue(script.contains("const PUSH_KEY_PATH = '/v1/push/key';"))
        XCTAssertTrue(script.contains("const PUSH_SUBSCRIPTIONS_PATH = '/v1/push/subscriptions';"))
        XCTAssertTrue(script.contains("Authorization: 'Bearer ' + token"))
        XCTAssertFalse(script.contains("localStorage"), "the watch token is never kept beyond the tab")
        // The worker's name is no donation's page.
        let page = try await live.request(.get, "/track/d-1")
        XCTAssertNotEqual(text(worker), text(page))
        let post = try await live.request(.post, TrackingPage.pushWorkerPath, body: "{}")
        XCTAssertEqual(post.status, .methodNotAllowed)
    }

    func testEveryValidDonationIdGetsTheSamePage() async throws {
        let first = try await live.request(.get, "/track/d-1")
        let other = try await live.request(.get, "/track/Some.Other_id:42-x")
        let unknown = try await live.request(.get, "/track/never-heard-of")
        XCTAssertEqual(other.status, .ok)
        XCTAssertEqual(unknown.status, .ok, "the page is static: it reveals nothing about which donations exist")
        XCTAssertEqual(text(first), text(other))
        XCTAssertEqual(text(first), text(unknown))
    }

    func testUnknownPathsAre404() async throws {
        let tooLong = String(repeating: "a", count: DonationID.maximumLength + 1)
        for path in ["/track", "/track/", "/track/d-1/extra", "/track/bad%20id", "/track/\(tooLong)", "/tracking/d-1", "/assets/other.js", "/nope"] {
            let response = try await live.request(.get, path)
            XCTAssertEqual(response.status, .notFound, path)
        }
        let invalid = try await live.request(.get, "/track/bad%20id")
        XCTAssertEqual(invalid.error?.code, .notFound)
        let post = try await live.request(.post, "/track/d-1", body: "{}")
        XCTAssertNotEqual(post.status, .ok, "the page is only read")
    }
}
