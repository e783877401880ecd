import Foundation
import XCTest

/// The recorded screens, one Swift file each under Goldens/ (Swift literals rather than text files, so the test
/// target needs no resources).
enum GoldenScreens {}

/// Compares a rendered screen with its golden.
///
/// On a mismatch the failure shows both screens, numbered and framed so blanks show, and the first differing line.
/// With WATCH_RECORD_GOLDENS=1 the actual screen is written to Goldens/<name>.swift instead; rebuild and review the diff.
enum GoldenScreen {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens")

    static func assert(_ lines: [String], matches golden: String, name: String, file: StaticString = #filePath, line: UInt = #line) {
        let actual = lines.joined(separator: "\n")
        if ProcessInfo.processInfo.environment["WATCH_RECORD_GOLDENS"] == "1" {
            record(lines, name: name, file: file, line: line)
            return
        }
        guard golden != actual else { return }
        let expectedLines = golden.components(separatedBy: "\n")
        let differing = zip(expectedLines, lines).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(expectedLines.count, lines.count)
        XCTFail(
            """
            golden screen '\(name)' differs, first at line \(differing + 1)
              expected: \(differing < expectedLines.count ? expectedLines[differing] : "(no line)")
              actual:   \(differing < lines.count ? lines[differing] : "(no line)")
            --- expected (Goldens/\(name).swift)
            \(framed(expectedLines))
            --- actual
            \(framed(lines))
            If the new screen is right, re-record with WATCH_RECORD_GOLDENS=1 and review the diff.
            """,
            file: file, line: line)
    }

    /// The lines between bars, numbered, so blanks and lengths are visible.
    static func framed(_ lines: [String]) -> String {
        lines.enumerated().map { index, text in
            let number = String(index + 1)
            return String(repeating: " ", count: max(0, 2 - number.count)) + number + " |" + text + "|"
        }.joined(separator: "\n")
    }

    private static func record(_ lines: [String], name: String, file: StaticString, line: UInt) {
        let body = lines.map { $0.isEmpty ? "" : "        " + $0 }.joined(separator: "\n")
        let source = """
            // The golden screen "\(name)", rendered without colour. Written by GoldenScreenTests when run with
            // WATCH_RECORD_GOLDENS=1: review the diff before committing it.
            extension GoldenScreens {
                static let \(name) = #\"\"\"
            \(body)
                    \"\"\"#
            }

            """
        let url = directory.appendingPathComponent("\(name).swift")
        do {
            try source.write(to: url, atomically: true, encoding: .utf8)
        } catch {
            XCTFail("could not record \(url.path): \(error)", file: file, line: line)
        }
    }
}
