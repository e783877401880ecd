import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Writes each log record as one JSON object on one line of standard error, for log shippers (`log_format: json`):
/// `time` (ISO 8601, UTC, milliseconds), `level`, `label`, `source`, `message`, and `metadata` when there is any,
/// keys sorted. Values are strings, or arrays and objects of them, as swift-log's metadata holds them.
package struct JSONLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// - Parameter write: where each line goes (standard error by default; tests collect them).
    package init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        var record: [String: Any] = [
            "time": Self.timestamp(Date()), "level": event.level.rawValue, "label": label, "source": event.source,
            "message": event.message.description,
        ]
        if let error = event.error { record["error"] = "\(error)" }
        if !merged.isEmpty { record["metadata"] = merged.mapValues(Self.plain) }
        guard let data = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    private static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(plain)
        case .dictionary(let values): values.mapValues(plain)
        }
    }

    private static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }

    /// One `write(2)` per line (looping only if the kernel takes part of it), so that lines from several
    /// threads do not interleave.
    package static let standardError: @Sendable (String) -> Void = { line in
        let bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            #else
            let written = bytes[offset...].withUnsafeBytes { Darwin.write(2, $0.baseAddress, $0.count) }
            #endif
            if written <= 0 { return }
            offset += written
        }
    }
}
