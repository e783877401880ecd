import BrokerProtocol
import Hummingbird
import NIOCore

/// A request body refused before it was read: larger than the limit, or cut off.
struct BodyRefusal: Error {
    let status: HTTPResponse.Status
    let error: BrokerError
}

extension Request {
    /// The whole body, at most `limit` bytes (the API's `max_body_bytes`).
    /// - Throws: ``BodyRefusal``: 413 `too-large` naming the limit, or 400 when the body could not be read.
    func collectBody(upTo limit: Int) async throws(BodyRefusal) -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw BodyRefusal(status: .contentTooLarge, error: .init(.tooLarge, "the body is larger than \(limit) bytes"))
        } catch {
            throw BodyRefusal(status: .badRequest, error: .init(.badRequest, "the body could not be read"))
        }
    }
}
