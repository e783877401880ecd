import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// POSTs one delivery (a webhook's JSON, an encrypted push) and says what came of it, on a shared `HTTPClient`.
///
/// What a receiver may do to the sender is bounded: the whole exchange has a deadline, a redirect is never
/// followed (it would carry the signed headers to a host nobody checked), and at most `responseBodyLimit` bytes
/// of the answer are read, then dropped, so a huge or endless answer costs nothing.
package struct DeliveryPoster: Sendable {
    /// The client; its owner shuts it down. Make it with `clientConfiguration(connectTimeout:)`.
    package let client: HTTPClient
    /// The deadline of one attempt, from the start of the connection to the end of the answer.
    package let timeout: Duration
    /// How many bytes of an answer's body are read before the rest is dropped.
    package let responseBodyLimit: Int

    /// A poster on `client`, which must not follow redirects (`clientConfiguration(connectTimeout:)` makes one so).
    package init(client: HTTPClient, timeout: Duration, responseBodyLimit: Int = 4096) {
        self.client = client
        self.timeout = timeout
        self.responseBodyLimit = responseBodyLimit
    }

    /// The configuration of the client deliveries need: redirects not followed, no decompression of answers
    /// (they are dropped anyway), and a connect timeout below the poster's deadline.
    package static func clientConfiguration(connectTimeout: Duration = .seconds(5)) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout.connect = TimeAmount(connectTimeout)
        return configuration
    }

    /// POSTs `body` with `headers` to `url`. Never throws: a failure is an outcome, as a status is.
    package func post(_ body: some DataProtocol, to url: String, headers: HTTPHeaders) async -> DeliveryOutcome {
        let request = Self.request(body, to: url, headers: headers)
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        do {
            // AsyncHTTPClient's deadline stops at the answer's head; the body is read under the same deadline here.
            return try await DeliveryDeadline.run(until: deadline) {
                let response = try await client.execute(request, deadline: deadline)
                guard response.history.count <= 1 else {
                    return .failed("the HTTP client followed a redirect; deliveries need one that does not")
                }
                var read = 0
                for try await chunk in response.body {
                    read += chunk.readableBytes
                    // Leaving the loop cancels the rest of the body and closes the connection.
                    if read > responseBodyLimit { break }
                }
                return .status(Int(response.status.code))
            }
        } catch {
            return .failed(DeliveryFailureText.describe(error, url: url, timeout: timeout))
        }
    }

    private static func request(_ body: some DataProtocol, to url: String, headers: HTTPHeaders) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = headers
        request.body = .bytes(ByteBuffer(bytes: body))
        return request
    }
}
