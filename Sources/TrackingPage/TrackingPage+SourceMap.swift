import Foundation

extension TrackingPage {
    /// The source map of ``script`` (version 3): each line of the served script points at its line in the file it
    /// came from, so that a browser's developer tools show Resources/page/state.js:120, not tracking-page.js:143.
    /// The files' text is in it too (`sourcesContent`): nothing else is fetched.
    static let sourceMap: String = {
        struct Map: Encodable {
            let version = 3
            let file = "tracking-page.js"
            let sources: [String]
            let sourcesContent: [String]
            let names: [String] = []
            let mappings: String
        }
        let named = scriptPieces.compactMap { piece in piece.name.map { (name: $0, text: piece.text) } }
        let map = Map(
            sources: named.map { $0.name == "constants.js" ? "generated/constants.js" : "Sources/TrackingPage/Resources/page/" + $0.name },
            sourcesContent: named.map(\.text),
            mappings: sourceMapMappings())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // An Encodable struct of strings and numbers always encodes.
        return String(decoding: (try? encoder.encode(map)) ?? Data(), as: UTF8.self)
    }()

    /// One segment per line of a file (column 0 to column 0), none for the lines no file holds; each field relative
    /// to the previous segment's, in base-64 VLQ, as the format says.
    static func sourceMapMappings() -> String {
        var lines: [String] = []
        var previousSource = 0
        var previousLine = 0
        var sourceIndex = -1
        for piece in scriptPieces {
            if piece.name != nil { sourceIndex += 1 }
            let count = piece.text.reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
            for line in 0..<count {
                guard piece.name != nil else {
                    lines.append("")
                    continue
                }
                lines.append(vlq(0) + vlq(sourceIndex - previousSource) + vlq(line - previousLine) + vlq(0))
                previousSource = sourceIndex
                previousLine = line
            }
        }
        return lines.joined(separator: ";")
    }

    /// `value` in base-64 VLQ: the sign in the lowest bit, five bits per digit, lowest first, 32 for "more".
    static func vlq(_ value: Int) -> String {
        let digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var rest = value < 0 ? (-value << 1) | 1 : value << 1
        var encoded = ""
        repeat {
            var digit = rest & 31
            rest >>= 5
            if rest > 0 { digit |= 32 }
            encoded.append(digits[digit])
        } while rest > 0
        return encoded
    }
}
