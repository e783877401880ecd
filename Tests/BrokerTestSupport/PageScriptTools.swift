import Foundation
import XCTest

/// node and eslint for the tests of the tracking page's scripts and the JavaScript client. Where they are missing
/// the tests that need them are skipped, unless `LB_REQUIRE_PAGE_TOOLS=1` (set by .ci/run, which installs them):
/// then a missing tool fails the test.
enum PageScriptTools {
    /// The path of `name` on `PATH`, or a skip (a failure when the tools are required).
    static func path(of name: String) throws -> String {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for folder in folders {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        if ProcessInfo.processInfo.environment["LB_REQUIRE_PAGE_TOOLS"] == "1" {
            throw ChildProcess.Failure(description: "\(name) is not on PATH, and LB_REQUIRE_PAGE_TOOLS=1 requires it")
        }
        throw XCTSkip("\(name) is not on PATH (CI installs it: .ci/run)")
    }

    /// Writes `text` to a new temporary folder as `name`; the caller removes the folder.
    static func write(_ text: String, named name: String) throws -> (folder: URL, file: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return (folder, file)
    }

    /// Runs node on `arguments` (at most 60 s) and returns its status and output.
    static func node(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(try path(of: "node"), arguments, timeout: .seconds(60))
    }

    /// Runs Debian's eslint with `config` (default Tests/BrowserTests/eslintrc.json, the page's) on `file`. NODE_PATH
    /// finds Debian's node modules when node itself is not Debian's (NodeSource's, for example).
    static func eslint(_ file: URL, config: URL? = nil) async throws -> (status: Int32, output: String) {
        let config = (config ?? BrokerProcess.packageRoot.appendingPathComponent("Tests/BrowserTests/eslintrc.json")).path
        var environment = ProcessInfo.processInfo.environment
        environment["NODE_PATH"] = "/usr/share/nodejs" + (environment["NODE_PATH"].map { ":" + $0 } ?? "")
        return try await ChildProcess.run(
            try path(of: "node"), [try path(of: "eslint"), "--no-eslintrc", "--no-ignore", "-c", config, "-f", "unix", file.path],
            environment: environment, timeout: .seconds(120))
    }
}
