import Foundation

/// The command line of `hot-path`: a scenario, then `--name value` pairs of positive integers.
struct RunOptions {
    /// The first argument: which run to do.
    let scenario: String
    private var values: [String: Int] = [:]

    /// Reads `arguments` (without the program's name); exits with status 64 on anything it does not understand.
    init(_ arguments: ArraySlice<String>) {
        guard let first = arguments.first else { Self.fail("no scenario given") }
        scenario = first
        var rest = arguments.dropFirst()
        while let name = rest.first {
            guard name.hasPrefix("--"), rest.count >= 2, let value = Int(rest[rest.startIndex + 1]), value > 0 else {
                Self.fail("expected --name POSITIVE-INTEGER, got \(Array(rest).joined(separator: " "))")
            }
            values[String(name.dropFirst(2))] = value
            rest = rest.dropFirst(2)
        }
    }

    /// The value of `--name`, or `fallback` when it was not given.
    func int(_ name: String, _ fallback: Int) -> Int { values[name] ?? fallback }

    /// Prints `message` and the usage to standard error and exits with status 64.
    static func fail(_ message: String) -> Never {
        let usage = "usage: hot-path fanout|pairs|decode|delivery|delivery-pairs|verify|accept|nio-frame|nio-bytes [--subscribers N] [--positions N] [--pairs N] [--rounds N] [--warmup N] [--frames N] [--tokens N] [--connections N]"
        FileHandle.standardError.write(Data("hot-path: \(message)\n\(usage)\n".utf8))
        exit(64)
    }
}

/// A run did not do what it should (a publish that did not reach every subscriber, a frame that did not decode).
struct RunError: Error, CustomStringConvertible {
    let description: String
}
