import BrokerHTTP
import BrokerProtocol
import BrokerStorage
import Foundation
import Hummingbird

/// For operators, with the backend key: `GET /v1/events/failed` lists the deliveries given up, and
/// `POST /v1/events/retry` sends one (or all) again.
struct EventRoutes: Sendable {
    let outbox: any EventOutbox
    let metrics: BrokerMetrics
    let clock: @Sendable () -> Int64

    func register(on router: Router<BrokerRequestContext>, backendKey: String) {
        let group = router.group("v1/events").add(middleware: BackendKeyMiddleware(backendKey: backendKey, metrics: metrics))
        group.get("failed") { request, _ in await failed(request) }
        group.post("retry") { request, _ in await retry(request) }
    }

    private func refuse(_ status: HTTPResponse.Status, _ error: BrokerError) -> Response {
        metrics.reject(error.code)
        return JSONResponse.error(status, error)
    }

    private func route(_ name: String?) -> OutboxRoute? {
        OutboxRoute(rawValue: name ?? "webhook")
    }

    /// One delivery given up, as an operator reads it.
    private struct FailedDelivery: Encodable {
        let id: String
        let type: String
        let donation: String
        let occurredAt: Int64
        let attempts: Int
        let lastError: String
    }

    private func failed(_ request: Request) async -> Response {
        guard let route = route(request.uri.queryParameters.get("route")) else {
            return refuse(.badRequest, .init(.badRequest, "route must be webhook or push"))
        }
        let limits = request.uri.queryParameters.getAll("limit")
        let limit = limits.isEmpty ? 100 : limits.count == 1 ? Int(limits[0]) : nil
        guard let limit, (1...1_000).contains(limit) else {
            return refuse(.badRequest, .init(.badRequest, "limit must be one whole number from 1 to 1000"))
        }
        do {
            let rows = try await outbox.failedEvents(route: route, limit: limit)
            return JSONResponse.encode(
                rows.map {
                    FailedDelivery(
                        id: $0.id, type: $0.type, donation: $0.donation, occurredAt: $0.occurredAt, attempts: $0.attempts,
                        lastError: $0.lastError ?? "")
                })
        } catch {
            return refuse(.serviceUnavailable, .init(.unavailable, "the event outbox cannot be read now; retry"))
        }
    }

    /// `{"route": "webhook" or "push" (optional), "id": an event id, null or absent}`, nothing else.
    private struct RetryBody: Decodable {
        let route: String?
        let id: String?

        private enum Keys: String, CodingKey { case route, id }

        init(route: String?, id: String?) {
            self.route = route
            self.id = id
        }

        init(from decoder: any Decoder) throws {
            // A null route is no route: only an absent one means the default.
            let container = try decoder.container(keyedBy: AnyKey.self)
            for key in container.allKeys where Keys(rawValue: key.stringValue) == nil {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown field \(key.stringValue)")
            }
            let known = try decoder.container(keyedBy: Keys.self)
            route = known.contains(.route) ? try known.decode(String.self, forKey: .route) : nil
            id = try known.decodeIfPresent(String.self, forKey: .id)
        }

        private struct AnyKey: CodingKey {
            let stringValue: String
            init?(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
    }

    private func retry(_ request: Request) async -> Response {
        let body: RetryBody
        do {
            let bytes = try await request.collectBody(upTo: 4_096)
            body = bytes.readableBytes == 0 ? RetryBody(route: nil, id: nil) : try JSONDecoder().decode(RetryBody.self, from: Data(buffer: bytes))
        } catch let refusal as BodyRefusal {
            return refuse(refusal.status, refusal.error)
        } catch {
            return refuse(.badRequest, .init(.badRequest, "the body must be {\"route\": \"webhook\" or \"push\", \"id\": an event id or null for all}"))
        }
        guard let route = route(body.route) else { return refuse(.badRequest, .init(.badRequest, "route must be webhook or push")) }
        do {
            let requeued = try await outbox.requeue(route: route, id: body.id, now: clock())
            if let id = body.id, requeued == 0 {
                return refuse(.notFound, .init(.notFound, "no failed \(route.rawValue) delivery \(id)"))
            }
            return JSONResponse.encode(["requeued": requeued])
        } catch {
            return refuse(.serviceUnavailable, .init(.unavailable, "the event outbox cannot be changed now; retry"))
        }
    }
}
