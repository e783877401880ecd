import BrokerHTTP
import Hummingbird
import HummingbirdCore
import Logging
import NIOHTTP1

/// How an HTTP request is answered: the router's response, with the `Date` and `Server` headers, and a 500 for
/// an error the routes did not turn into a response (its details only in a `debug` line).
package enum HTTPResponding {
    /// The responder that ``BrokerServerChannel`` hands each HTTP request to.
    package static func responder(
        router: RouterResponder<BrokerRequestContext>, date: HTTPDate, serverName: String, logger: Logger
    ) -> HTTPChannelHandler.Responder {
        { request, responseWriter, channel in
            var requestLogger = logger
            requestLogger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            let context = BrokerRequestContext(source: .init(channel: channel, logger: requestLogger))
            var response: Response
            do {
                response = try await router.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                // Hummingbird's HTTP handling answers a request it could not parse itself.
                throw error
            } catch {
                requestLogger.debug("unrecognised error", metadata: ["error.type": "\(type(of: error))"])
                response = Response(status: .internalServerError)
            }
            response.headers[.date] = date.now
            response.headers[.server] = serverName
            do {
                try await responseWriter.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Rethrown as is, Hummingbird would answer it with a second response: the connection is closed instead.
                throw ResponseNotWritten()
            }
        }
    }

    /// The response could not be written; the connection is closed.
    private struct ResponseNotWritten: Error {}
}
