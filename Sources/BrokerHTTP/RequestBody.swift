import BrokerProtocol
import Hummingbird
import NIOCore

/// A request body refused before it was read: larger than the limit, or cut off.
package struct BodyRefusal: Error {
    package let status: HTTPResponse.Status
    package let error: BrokerError
}

extension Request {
    /// The whole body, at most `limit` bytes (the API's `max_body_bytes`): the one way every route reads a body.
    /// - Throws: ``BodyRefusal``: 413 `too-large` naming the limit, or 400 when the body could not be read.
    package func collectBody(upTo limit: Int) async throws(BodyRefusal) -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw BodyRefusal(status: .contentTooLarge, error: .init(.tooLarge, "the body is larger than \(limit) bytes"))
        } catch {
            throw BodyRefusal(status: .badRequest, error: .init(.badRequest, "the body could not be read"))
        }
    }
}
