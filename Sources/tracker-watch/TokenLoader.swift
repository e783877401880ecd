import ArgumentParser
import Foundation

/// Reads the donor's token from `--token` or `--token-file`.
enum TokenLoader {
    /// The token, without surrounding whitespace.
    /// - Throws: `ValidationError` (exit status 2) when it is missing, empty or unreadable.
    static func load(token: String?, file: String?) throws -> String {
        if let token {
            let trimmed = token.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw ValidationError("--token is empty") }
            return trimmed
        }
        guard let file else { throw ValidationError("give --token or --token-file") }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError("cannot read the token file \(file): \(error.localizedDescription)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw ValidationError("the token file \(file) is empty") }
        guard !text.contains(where: \.isWhitespace) else {
            throw ValidationError("the token file \(file) must hold the token alone, without spaces or other lines")
        }
        return text
    }
}
