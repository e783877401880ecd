import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import TrackingPage

/// The page's script files, the script made of them and the JavaScript client pass `node --check` and eslint
/// (Tests/BrowserTests/eslintrc.json; the notification worker by eslintrc-worker.json), and each check can fail.
/// That the broker serves these files: TrackingPageFilesTests, against a live broker.
final class PageScriptCheckTests: XCTestCase {
    func testEveryScriptFileAndTheServedScriptPassNodeCheck() async throws {
        // Each file alone (node reads a file as a CommonJS module body, where start.js's early `return` is valid),
        // then the served script and the client as browsers run them (ES modules: `.mjs`).
        var checked: [(name: String, text: String)] = TrackingPage.Files.scripts
        checked.append(("tracking-page.mjs", TrackingPage.script))
        checked.append(("location-broker-client.mjs", TrackingPage.Files.client))
        checked.append(("push-worker.js", TrackingPage.Files.pushWorker))
        for (name, text) in checked {
            let written = try PageScriptTools.write(text, named: name)
            defer { try? FileManager.default.removeItem(at: written.folder) }
            let result = try await PageScriptTools.node(["--check", written.file.path])
            XCTAssertEqual(result.status, 0, "node --check \(name): \(result.output)")
        }
    }

    func testNodeCheckCatchesABrokenScript() async throws {
        // The check can fail: a missing brace in the served script.
        let broken = TrackingPage.script.replacingOccurrences(of: "function tick() {", with: "function tick() ")
        XCTAssertNotEqual(broken, TrackingPage.script)
        let written = try PageScriptTools.write(broken, named: "broken.mjs")
        defer { try? FileManager.default.removeItem(at: written.folder) }
        let status = try await PageScriptTools.node(["--check", written.file.path]).status
        XCTAssertNotEqual(status, 0)
    }

    func testTheServedScriptAndTheClientPassESLint() async throws {
        for (name, text) in [("tracking-page.js", TrackingPage.script), ("location-broker-client.js", TrackingPage.Files.client)] {
            let written = try PageScriptTools.write(text, named: name)
            defer { try? FileManager.default.removeItem(at: written.folder) }
            let result = try await PageScriptTools.eslint(written.file)
            XCTAssertEqual(result.status, 0, "eslint (Tests/BrowserTests/eslintrc.json) on \(name): \(result.output)")
        }
        // And it finds what it is there for: a name that is not defined.
        let misspelt = TrackingPage.script.replacingOccurrences(of: "\nrender();\nwatcher.start();", with: "\nrendr();\nwatcher.start();")
        XCTAssertNotEqual(misspelt, TrackingPage.script)
        let typo = try PageScriptTools.write(misspelt, named: "typo.js")
        defer { try? FileManager.default.removeItem(at: typo.folder) }
        let caught = try await PageScriptTools.eslint(typo.file)
        XCTAssertEqual(caught.status, 1, caught.output)
        XCTAssertTrue(caught.output.contains("'rendr' is not defined"), caught.output)
    }

    /// The notification worker is a classic script in a service worker's scope: its own rules (eslintrc-worker.json).
    func testTheNotificationWorkerPassesESLintAsAServiceWorker() async throws {
        let config = BrokerProcess.packageRoot.appendingPathComponent("Tests/BrowserTests/eslintrc-worker.json")
        let written = try PageScriptTools.write(TrackingPage.Files.pushWorker, named: "push-worker.js")
        defer { try? FileManager.default.removeItem(at: written.folder) }
        let result = try await PageScriptTools.eslint(written.file, config: config)
        XCTAssertEqual(result.status, 0, "eslint (Tests/BrowserTests/eslintrc-worker.json) on push-worker.js: \(result.output)")
        // A page's global is no worker's: `document` is not defined there.
        let wrong = TrackingPage.Files.pushWorker.replacingOccurrences(of: "event.notification.close();", with: "document.title = '';")
        XCTAssertNotEqual(wrong, TrackingPage.Files.pushWorker)
        let bad = try PageScriptTools.write(wrong, named: "bad-worker.js")
        defer { try? FileManager.default.removeItem(at: bad.folder) }
        let caught = try await PageScriptTools.eslint(bad.file, config: config)
        XCTAssertEqual(caught.status, 1, caught.output)
        XCTAssertTrue(caught.output.contains("'document' is not defined"), caught.output)
    }
}
