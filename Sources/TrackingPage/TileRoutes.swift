import BrokerHTTP
import BrokerProtocol
import Foundation
import Hummingbird
import Logging

/// `GET /tiles/{z}/{x}/{y}`: the tracking page's map tiles from `map_tiles_file`, so that no third party learns
/// which area a donor looks at. Answers 404 when the broker has no tiles file, and for a tile outside the file's
/// zooms or bounds or missing from it; 400 when z, x or y is not a whole number. Tiles carry an ETag, and a
/// request that names it (`If-None-Match`) gets 304 without the bytes.
package struct TileRoutes: Sendable {
    /// The page's tile layer asks for this template.
    static let template = "/tiles/{z}/{x}/{y}"

    let tiles: MBTiles?
    /// Counts a refused request, by its code.
    let countRefusal: @Sendable (ErrorCode) -> Void
    let logger: Logger

    func register(on router: Router<BrokerRequestContext>) {
        router.get("tiles/:z/:x/:y") { request, context -> Response in
            try await answer(request, z: context.parameters.get("z"), x: context.parameters.get("x"), y: context.parameters.get("y"))
        }
    }

    private func answer(_ request: Request, z: String?, x: String?, y: String?) async throws -> Response {
        guard let tiles else {
            return refuse(.notFound, .init(.notFound, "this broker serves no map tiles (map_tiles_file is not set)"))
        }
        guard let z = Self.number(z), let x = Self.number(x), let y = Self.number(y) else {
            return refuse(.badRequest, .init(.badRequest, "z, x and y are whole numbers of at most 10 digits: /tiles/{z}/{x}/{y}"))
        }
        let tile: MBTiles.Tile?
        do {
            tile = try await tiles.tile(z: z, x: x, y: y)
        } catch {
            logger.error("map_tiles_file could not be read", metadata: ["error": "\(error)"])
            return refuse(.serviceUnavailable, .init(.unavailable, "the map tiles cannot be read right now"))
        }
        guard let tile else {
            return refuse(
                .notFound,
                .init(.notFound, "no tile \(z)/\(x)/\(y): this map has zooms \(tiles.minZoom) to \(tiles.maxZoom) and covers only its own area"))
        }
        let etag = tile.etag
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, max-age=3600", .xContentTypeOptions: "nosniff"]
        if Self.matches(request.headers[values: .ifNoneMatch], etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = tiles.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: tile.data)))
    }

    private func refuse(_ status: HTTPResponse.Status, _ error: BrokerError) -> Response {
        countRefusal(error.code)
        return JSONResponse.error(status, error)
    }

    /// A path segment of 1 to 10 ASCII digits (no sign, no spaces: `Int("+1")` would take one).
    static func number(_ text: String?) -> Int? {
        guard let text, (1...10).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    /// `If-None-Match: "a", W/"b"` or `*` names `etag` (weak comparison, RFC 9110 §13.1.2).
    static func matches(_ values: [String], _ etag: String) -> Bool {
        values.flatMap { $0.split(separator: ",") }.contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == etag || trimmed == "W/" + etag
        }
    }
}
