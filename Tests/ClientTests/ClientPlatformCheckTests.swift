import Foundation
import NIOConcurrencyHelpers
import XCTest

/// `scripts/check-client-platforms` on the real resolved graph: the client installs at iOS 16 and macOS 13, and the
/// check fails when the declared floor goes below a dependency's, above the goal, when a reached package is pinned
/// exactly, or when the client's sources use an API above the floor without a check; and with `--all-targets`, that
/// every target of the package (the broker, the tools, the tests) builds at the floors the package declares.
final class ClientPlatformCheckTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private static let script = root.appendingPathComponent("scripts/check-client-platforms").path

    /// The graph read once (dumping a dozen manifests takes half a minute) and checked again by each test.
    nonisolated(unsafe) private static var savedGraph: URL?

    private struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    private static func run(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self), errors: String(decoding: errorData, as: UTF8.self))
    }

    /// Reads the real graph once: our manifest and every reached package's, from .build/checkouts.
    private func graph() throws -> URL {
        if let saved = Self.savedGraph { return saved }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-graph-\(UUID().uuidString).json")
        let run = try Self.run(["--root", Self.root.path, "--save-graph", file.path])
        XCTAssertEqual(run.status, 0, "the client as declared installs at the goal: \(run.output)\(run.errors)")
        XCTAssertTrue(run.output.contains("swift-websocket: iOS 16.0, macOS 13.0"), run.output)
        Self.savedGraph = file
        return file
    }

    private func check(_ arguments: [String]) throws -> Run {
        try Self.run(["--root", Self.root.path, "--graph", try graph().path] + arguments)
    }

    func testTheClientInstallsAtIOS16AndMacOS13() throws {
        let run = try check([])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("declared iOS 16.0, macOS 13.0"), run.output)
        XCTAssertTrue(run.output.contains("swift-nio-transport-services"), "the Apple-only transport is part of what is checked: \(run.output)")
        XCTAssertTrue(
            run.output.contains("sources checked: Sources/BrokerClient, Sources/BrokerProtocol, Sources/TrackingRules"),
            "the sources of every target of ours the client is built from are held to the floor: \(run.output)")
    }

    /// Checks the graph as if we declared `declared`: it must fail, saying `reason`.
    private func expectRefusal(declaring declared: String, _ reason: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try check(["--declared", declared])
        XCTAssertEqual(run.status, 1, file: file, line: line)
        XCTAssertTrue(run.errors.contains(reason), run.errors, file: file, line: line)
    }

    func testAFloorLoweredBelowADependencysFails() throws {
        try expectRefusal(declaring: "ios=15", "swift-websocket needs iOS 16.0, above the iOS 15.0 the package declares")
        try expectRefusal(declaring: "macos=12", "swift-websocket needs macOS 13.0, above the macOS 12.0 the package declares")
    }

    func testAFloorRaisedAboveTheGoalFails() throws {
        try expectRefusal(declaring: "ios=17", "the package declares iOS 17.0, above the goal iOS 16.0")
        try expectRefusal(declaring: "macos=15", "the package declares macOS 15.0, above the goal macOS 13.0")
    }

    func testAnExactPinOnAReachedPackageFails() throws {
        var graph = try JSONSerialization.jsonObject(with: Data(contentsOf: try graph())) as? [String: Any] ?? [:]
        var requirements = graph["requirements"] as? [String: String] ?? [:]
        requirements["swift-nio"] = "exact"
        graph["requirements"] = requirements
        let pinned = FileManager.default.temporaryDirectory.appendingPathComponent("client-graph-pinned-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: graph).write(to: pinned)
        defer { try? FileManager.default.removeItem(at: pinned) }
        let run = try Self.run(["--root", Self.root.path, "--graph", pinned.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errors.contains("swift-nio is pinned to an exact version"), run.errors)
    }

    func testAnAPIAboveTheFloorInTheClientsSourcesFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("client-sources-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "import NIOConcurrencyHelpers\nlet box = NIOLockedValueBox(0)\n".write(to: folder.appendingPathComponent("Fine.swift"), atomically: true, encoding: .utf8)
        let clean = try check(["--sources", folder.path])
        XCTAssertEqual(clean.status, 0, clean.errors)

        try "import Synchronization\nlet lock = NIOLockedValueBox(0)\n".write(to: folder.appendingPathComponent("Lock.swift"), atomically: true, encoding: .utf8)
        try "import Observation\n@Observable final class Model {}\n".write(to: folder.appendingPathComponent("Model.swift"), atomically: true, encoding: .utf8)
        let run = try check(["--sources", folder.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errors.contains("Lock.swift: uses Synchronization"), run.errors)
        XCTAssertTrue(run.errors.contains("Model.swift: uses @Observable"), run.errors)
    }

    func testSynchronizationOnlyInsideALinuxBlockPasses() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linux-sources-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let linuxOnly = "#if os(Linux)\nimport Synchronization\nlet lock = Mutex(0)\n#else\nlet lock = NIOLockedValueBox(0)\n#endif\n"
        try linuxOnly.write(to: folder.appendingPathComponent("Lock.swift"), atomically: true, encoding: .utf8)
        let clean = try check(["--sources", folder.path])
        XCTAssertEqual(clean.status, 0, "what only Linux compiles is not held to the Apple floors: \(clean.errors)")

        // The Apple branches after the Linux one are checked, whether `#elseif` or `#else` opens them.
        let elseif = "#if os(Linux)\nimport Synchronization\n#elseif os(macOS)\nlet lock = Mutex(0)\n#endif\n"
        try elseif.write(to: folder.appendingPathComponent("Lock.swift"), atomically: true, encoding: .utf8)
        let afterElseif = try check(["--sources", folder.path])
        XCTAssertEqual(afterElseif.status, 1)
        XCTAssertTrue(afterElseif.errors.contains("Lock.swift: uses Synchronization"), afterElseif.errors)

        let after = "#if os(Linux)\nlet size = 1\n#endif\nlet lock = Mutex(0)\n"
        try after.write(to: folder.appendingPathComponent("Lock.swift"), atomically: true, encoding: .utf8)
        let afterEndif = try check(["--sources", folder.path])
        XCTAssertEqual(afterEndif.status, 1)
        XCTAssertTrue(afterEndif.errors.contains("Lock.swift: uses Synchronization"), afterEndif.errors)
    }

    func testEveryTargetOfThePackageBuildsAtTheDeclaredFloors() throws {
        let run = try Self.run(["--root", Self.root.path, "--all-targets"])
        XCTAssertEqual(run.status, 0, "the broker, the tools and the tests build on macOS 13 and iOS 16: \(run.errors)")
        XCTAssertTrue(run.output.contains("Sources/LocationBroker"), "the broker's sources are checked: \(run.output)")
        XCTAssertTrue(run.output.contains("Tests/BrokerTests"), "the tests' sources are checked: \(run.output)")
        XCTAssertTrue(run.output.contains("postgres-nio"), "every package the whole graph reaches is checked: \(run.output)")
    }

    func testADiscardingTaskGroupWithoutAnAvailabilityCheckFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("broker-sources-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = "func serve() async {\n    await withDiscardingTaskGroup { group in group.addTask {} }\n}\n"
        try body.write(to: folder.appendingPathComponent("Serve.swift"), atomically: true, encoding: .utf8)
        let run = try check(["--sources", folder.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errors.contains("Serve.swift: uses a discarding task group (iOS 17, macOS 14)"), run.errors)

        try ("@available(macOS 14, iOS 17, *)\n" + body).write(to: folder.appendingPathComponent("Serve.swift"), atomically: true, encoding: .utf8)
        let checked = try check(["--sources", folder.path])
        XCTAssertEqual(checked.status, 0, "a use that says when it is available passes: \(checked.errors)")
    }
}
