import AsyncHTTPClient
import BrokerCore
import Foundation
import NIOCore
import NIOHTTP1

/// Where the key set comes from: a file on disk (`jwks_file`) or an HTTPS URL (`jwks_url`).
package enum JWKSSource: Sendable, CustomStringConvertible {
    case file(String)
    case url(URL)

    package var description: String {
        switch self {
        case .file(let path): path
        case .url(let url): url.absoluteString
        }
    }

    /// The largest key set read, in bytes (Firebase's is about 2 KB).
    static let maximumBytes = 1 << 20

    /// One reading of the source.
    struct Reading: Sendable {
        let data: Data
        /// URL: the response's `Cache-Control: max-age`, if any.
        let maxAge: Duration?
        /// File: what identifies this version of the file (modification time and size).
        let fileVersion: FileVersion?
    }

    /// A file's modification time and size: when either changes, the file is read again.
    struct FileVersion: Sendable, Equatable {
        let modified: Date
        let size: Int

        init?(path: String) {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let modified = attributes[.modificationDate] as? Date, let size = attributes[.size] as? NSNumber
            else { return nil }
            self.modified = modified
            self.size = size.intValue
        }
    }

    /// Reads the key set, or throws a ``ConfigurationError`` saying what went wrong.
    func read(timeout: Duration) async throws -> Reading {
        switch self {
        case .file(let path):
            let version = FileVersion(path: path)
            if let size = version?.size, size > Self.maximumBytes {
                throw ConfigurationError(description: "the JWKS file \(path) is larger than \(Self.maximumBytes) bytes")
            }
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ConfigurationError(description: "cannot read the JWKS file \(path): \(error.localizedDescription)")
            }
            guard data.count <= Self.maximumBytes else {
                throw ConfigurationError(description: "the JWKS file \(path) is larger than \(Self.maximumBytes) bytes")
            }
            return Reading(data: data, maxAge: nil, fileVersion: version)
        case .url(let url):
            return try await Self.fetch(url, timeout: timeout)
        }
    }

    /// GETs the key set with a client of its own that follows no redirect (a redirect could lead off HTTPS),
    /// and shuts it down before returning.
    private static func fetch(_ url: URL, timeout: Duration) async throws -> Reading {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: Self.timeAmount(timeout), read: Self.timeAmount(timeout))
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let result: Result<Reading, any Error>
        do {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await client.execute(request, timeout: Self.timeAmount(timeout))
            guard response.status == .ok else {
                _ = try? await response.body.collect(upTo: Self.maximumBytes)
                throw ConfigurationError(description: "the JWKS URL \(url.absoluteString) answered \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: Self.maximumBytes)
            result = .success(
                Reading(data: Data(body.readableBytesView), maxAge: maxAge(response.headers["Cache-Control"]), fileVersion: nil))
        } catch let error as ConfigurationError {
            result = .failure(error)
        } catch {
            result = .failure(ConfigurationError(description: "cannot fetch the JWKS from \(url.absoluteString): \(error)"))
        }
        try? await client.shutdown()
        return try result.get()
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// The `max-age` of `Cache-Control` header values, in seconds; `nil` when absent or unreadable.
    /// `no-cache` and `no-store` count as 0 (the refresher's floor applies).
    static func maxAge(_ values: [String]) -> Duration? {
        for directive in values.flatMap({ $0.split(separator: ",") }) {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if parts[0] == "no-cache" || parts[0] == "no-store" { return .zero }
            if parts[0] == "max-age", parts.count == 2, let seconds = Int64(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))),
                seconds >= 0
            {
                return .seconds(seconds)
            }
        }
        return nil
    }
}
