import Foundation

/// Text as a terminal shows it: safe characters, columns, truncation, wrapping and an ASCII fallback.
///
/// Everything that came from the broker (labels, names, messages) passes through ``sanitized(_:)`` before it is
/// drawn, so that a label cannot smuggle escape sequences onto the donor's screen.
public enum TerminalText {
    /// Replaces control and formatting characters with `?`, and line breaks and tabs with a space.
    public static func sanitized(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            if character == "\n" || character == "\r\n" || character == "\t" || character == "\r" {
                result.append(" ")
            } else if character.unicodeScalars.contains(where: isUnsafe) {
                result.append("?")
            } else {
                result.append(character)
            }
        }
        return result
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate:
            return true
        case .format:
            // The zero-width joiner holds emoji sequences together; bidi overrides and the like are refused.
            return scalar.value != 0x200D
        default:
            return false
        }
    }

    /// How many terminal columns a character takes: 2 for East Asian wide characters and emoji, otherwise 1.
    public static func columns(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.properties.isEmojiPresentation || character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) {
            return 2
        }
        return isWide(first.value) ? 2 : 1
    }

    /// How many terminal columns a string takes.
    public static func columns(of text: String) -> Int {
        text.reduce(0) { $0 + columns(of: $1) }
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// Cuts `text` to at most `width` columns, ending with an ellipsis when something was cut.
    public static func truncated(_ text: String, to width: Int, ascii: Bool = false) -> String {
        guard width > 0 else { return "" }
        guard columns(of: text) > width else { return text }
        let ellipsis = ascii ? "..." : "…"
        let room = width - columns(of: ellipsis)
        guard room > 0 else { return prefix(text, columns: width) }
        return prefix(text, columns: room) + ellipsis
    }

    /// The longest start of `text` that fits in `columns` columns.
    static func prefix(_ text: String, columns limit: Int) -> String {
        var result = ""
        var used = 0
        for character in text {
            let width = columns(of: character)
            guard used + width <= limit else { break }
            result.append(character)
            used += width
        }
        return result
    }

    /// Breaks `text` into lines of at most `width` columns at spaces; a word longer than a line is cut.
    public static func wrapped(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            var word = word
            while columns(of: word) > width {
                if !line.isEmpty {
                    lines.append(line)
                    line = ""
                }
                let head = prefix(word, columns: width)
                lines.append(head)
                word = String(word.dropFirst(head.count))
            }
            if line.isEmpty {
                line = word
            } else if columns(of: line) + 1 + columns(of: word) <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// The same text in plain ASCII: typographic marks spelled out, accents dropped, anything else shown as `?`.
    public static func ascii(_ text: String) -> String {
        var spelled = ""
        for character in text {
            if let replacement = asciiReplacements[character] {
                spelled += replacement
            } else {
                spelled.append(character)
            }
        }
        var result = ""
        for scalar in spelled.decomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar.isASCII {
                result.unicodeScalars.append(scalar)
            } else if scalar.properties.generalCategory != .nonspacingMark {
                result.append("?")
            }
        }
        return result
    }

    private static let asciiReplacements: [Character: String] = [
        "—": "-", "–": "-", "…": "...", "°": " deg", "±": "+/-", "·": "-", "’": "'", "‘": "'", "“": "\"", "”": "\"",
        "↑": "^", "↗": "/", "→": ">", "↘": "\\", "↓": "v", "↙": "/", "←": "<", "↖": "\\", "●": "@", "─": "-", "│": "|",
        "┬": "+", "┴": "+", "├": "|", "┤": "|", "×": "x",
    ]
}
