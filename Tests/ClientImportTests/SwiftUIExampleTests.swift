import BrokerClient
import Foundation
import XCTest

/// The SwiftUI example in docs/CLIENTS.md is the code SwiftUIExample.swift compiles, against BrokerClient's public
/// API alone: renaming anything it uses breaks this target's build, and editing the doc without its twin (or the
/// twin without the doc) fails here.
final class SwiftUIExampleTests: XCTestCase {
    private static let begins = "// docs/CLIENTS.md example begins\n"
    private static let ends = "// docs/CLIENTS.md example ends"

    private static func text(_ relative: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    /// The Swift block of CLIENTS.md that imports SwiftUI.
    private static func docBlock() throws -> String {
        let doc = try text("docs/CLIENTS.md")
        let blocks = doc.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "\n```").first ?? "" }
        let swiftUI = blocks.filter { $0.contains("import SwiftUI") }
        guard swiftUI.count == 1, let block = swiftUI.first else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "CLIENTS.md has \(swiftUI.count) Swift blocks importing SwiftUI, not 1"])
        }
        return block
    }

    func testTheDocsSwiftUIExampleIsTheCodeThisTargetCompiles() throws {
        let block = try Self.docBlock()
        let lines = block.components(separatedBy: "\n")
        XCTAssertEqual(Array(lines.prefix(3)), ["import BrokerClient", "import SwiftUI", ""], "an app imports BrokerClient and SwiftUI, nothing else")
        let example = lines.dropFirst(3).joined(separator: "\n")
        let twin = try Self.text("Tests/ClientImportTests/SwiftUIExample.swift")
        guard let start = twin.range(of: Self.begins), let end = twin.range(of: Self.ends) else { return XCTFail("the twin lost its markers") }
        let compiled = String(twin[start.upperBound..<end.lowerBound])
        XCTAssertEqual(
            example.trimmingCharacters(in: .whitespacesAndNewlines), compiled.trimmingCharacters(in: .whitespacesAndNewlines),
            "docs/CLIENTS.md's SwiftUI example and Tests/ClientImportTests/SwiftUIExample.swift differ: change both")
    }

    @MainActor
    func testTheExamplesViewsAndWordsWorkOnAWatcherAndAPublisherNotYetRunning() async {
        let watcher = DonationWatcher(url: "ws://127.0.0.1:9/v1/ws", target: .donation("d-1")) { "token" }
        let publisher = VolunteerPublisher(url: "ws://127.0.0.1:9/v1/ws") { "token" }
        _ = TripView(watcher: watcher)
        _ = VolunteerStatusView(publisher: publisher)
        XCTAssertEqual(TripWords.headline(watcher.screen()), "Connecting…")
        // Not running: the fix waits for a connection; the caller's task is not held once cancelled.
        let sharing = Task { await share(Position(lat: -34.6, lon: -58.4, timestamp: 1_700_000_000_000), with: publisher) }
        try? await Task.sleep(for: .milliseconds(50))
        sharing.cancel()
        let words = await sharing.value
        XCTAssertEqual(words, "No longer waiting")
    }
}
