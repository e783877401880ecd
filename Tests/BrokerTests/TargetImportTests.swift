import Foundation
import XCTest

@testable import BrokerTestSupport

/// The targets and what each may import are drawn once, in docs/ARCHITECTURE.md's "Targets" table; this test holds
/// the sources to it, so that a newcomer can trust the layout: the transport cannot reach into the broker, the
/// page cannot reach the store, and the core stays without a transport.
final class TargetImportTests: XCTestCase {
    /// A target's row: the folder its sources are in and the targets of ours it may import.
    struct Row {
        let target: String
        let allowed: Set<String>
    }

    /// Where a target's sources are, when not `Sources/<target>`.
    static let folders = ["BrokerBenchmarkFixtures": "Benchmarks/Fixtures"]

    static func rows() throws -> [Row] {
        let text = try String(contentsOf: BrokerProcess.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        guard let start = text.range(of: "| Target | Purpose | May import (ours) |") else {
            throw XCTSkip("docs/ARCHITECTURE.md has no Targets table")
        }
        var rows: [Row] = []
        for line in text[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5 else {
                XCTFail("a row of the Targets table does not have three cells: \(line)")
                continue
            }
            let names = { (cell: String) in Set(cell.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }.filter { !$0.isEmpty }) }
            rows.append(Row(target: cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), allowed: names(cells[3])))
        }
        return rows
    }

    /// The modules `source` imports, in any form (`@testable`, `@_exported`, `import struct M.T`).
    static func imports(in source: String) -> Set<String> {
        var modules: Set<String> = []
        for line in source.split(separator: "\n") {
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
            guard words.first == "import", words.count >= 2 else { continue }
            let path = words.count >= 3 ? words[2] : words[1]
            modules.insert(String(path.split(separator: ".").first ?? path))
        }
        return modules
    }

    func testEveryTargetImportsOnlyWhatItsRowAllows() throws {
        let root = BrokerProcess.packageRoot
        let rows = try Self.rows()
        let ours = Set(rows.map(\.target))
        XCTAssertGreaterThan(rows.count, 10, "the table was read")
        for row in rows {
            let folder = root.appendingPathComponent(Self.folders[row.target] ?? "Sources/\(row.target)")
            let files = try XCTUnwrap(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil), row.target)
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
            XCTAssertFalse(files.isEmpty, "\(row.target) has no sources in \(folder.path)")
            for file in files {
                let imported = Self.imports(in: try String(contentsOf: file, encoding: .utf8)).intersection(ours)
                for module in imported.subtracting(row.allowed).subtracting([row.target]) {
                    XCTFail("\(row.target) imports \(module) (\(file.lastPathComponent)), which docs/ARCHITECTURE.md does not allow it")
                }
            }
        }
    }

    func testEveryFolderInSourcesIsATargetOfTheTable() throws {
        let rows = Set(try Self.rows().map(\.target))
        let folders = try FileManager.default.contentsOfDirectory(atPath: BrokerProcess.packageRoot.appendingPathComponent("Sources").path)
        for folder in folders where !folder.hasPrefix(".") {
            XCTAssertTrue(rows.contains(folder), "Sources/\(folder) is not drawn in docs/ARCHITECTURE.md's Targets table")
        }
    }

    /// The database packages stop at the store targets: the composition root opens a store through them and never
    /// reaches a database itself.
    func testLocationBrokerImportsNoDatabasePackage() throws {
        let folder = BrokerProcess.packageRoot.appendingPathComponent("Sources/LocationBroker")
        let files = try XCTUnwrap(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        XCTAssertFalse(files.isEmpty)
        for file in files {
            for module in Self.imports(in: try String(contentsOf: file, encoding: .utf8)).intersection(["GRDB", "PostgresNIO"]) {
                XCTFail("LocationBroker imports \(module) (\(file.lastPathComponent)): the stores are BrokerSQLite's and BrokerPostgres'")
            }
        }
    }

    /// Where a target's own tests are, when not `Tests/<target>Tests`.
    static let testFolders = ["BrokerCore": "CoreTests", "BrokerProtocol": "ProtocolTests"]

    /// The broker's parts are tested beside themselves, without the composition root: a test that needs the whole
    /// broker belongs to Tests/BrokerTests.
    func testThePartsTestsDoNotImportLocationBroker() throws {
        let root = BrokerProcess.packageRoot
        let parts = try XCTUnwrap(try Self.rows().first { $0.target == "LocationBroker" }, "LocationBroker's row").allowed
        var searched = 0
        for part in parts {
            let folder = root.appendingPathComponent("Tests/" + (Self.testFolders[part] ?? part + "Tests"))
            guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { continue }
            for file in files.compactMap({ $0 as? URL }).filter({ $0.pathExtension == "swift" }) {
                searched += 1
                if Self.imports(in: try String(contentsOf: file, encoding: .utf8)).contains("LocationBroker") {
                    XCTFail("Tests/\(folder.lastPathComponent)/\(file.lastPathComponent) imports LocationBroker: it tests \(part) without a broker")
                }
            }
        }
        XCTAssertGreaterThan(searched, 10, "the parts' tests were read")
    }

    /// The test itself must be able to fail: an import the table forbids is seen.
    func testAForbiddenImportIsSeen() {
        let source = "import NIOCore\n@testable import LocationBroker\nimport struct BrokerCore.Hub\n"
        XCTAssertEqual(Self.imports(in: source), ["NIOCore", "LocationBroker", "BrokerCore"])
    }
}
