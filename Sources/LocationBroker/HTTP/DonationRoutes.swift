import BrokerAuth
import BrokerHTTP
import BrokerProtocol
import BrokerStorage
import Foundation
import Hummingbird
import Logging
import NIOCore

/// `PUT`, `GET` and `DELETE /v1/donations/{id}`: the Ponte backend tells the broker about donations; and
/// `POST /v1/donations/{id}/watch-token`: a link for the donor (DonationRoutes+WatchToken.swift).
struct DonationRoutes: Sendable {
    let service: DonationService
    let watchLinks: WatchTokenVerifier
    let metrics: BrokerMetrics
    let maxBodyBytes: Int

    func register(on router: Router<BrokerRequestContext>, backendKey: String) {
        let group = router.group("v1/donations").add(middleware: BackendKeyMiddleware(backendKey: backendKey, metrics: metrics))
        group.put(":id") { request, context in await put(request, context) }
        group.get(":id") { _, context in await get(context) }
        group.delete(":id") { _, context in await delete(context) }
        group.post(":id/watch-token") { _, context in await watchToken(context) }
    }

    func refuse(_ status: HTTPResponse.Status, _ error: BrokerError) -> Response {
        metrics.reject(error.code)
        return JSONResponse.error(status, error)
    }

    private func put(_ request: Request, _ context: BrokerRequestContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maxBodyBytes)
        } catch {
            return refuse(error.status, error.error)
        }
        let update: DonationUpdate
        do {
            update = try JSONDecoder().decode(DonationUpdate.self, from: Data(buffer: body))
        } catch let error as DecodingError {
            return refuse(.badRequest, Self.describe(error))
        } catch {
            return refuse(.badRequest, .init(.badRequest, "the body is not valid JSON"))
        }
        do {
            return JSONResponse.encode(try await service.put(id: id, update))
        } catch let refusal as DonationService.Refusal {
            return refuse(.init(code: refusal.status), refusal.error)
        } catch let error as DonationStoreUnavailable {
            context.logger.warning("donation store unavailable", metadata: ["donation": "\(id)", "error": "\(error)"])
            return refuse(.serviceUnavailable, .init(.unavailable, "the donation store cannot be reached now (\(error)); send the same PUT again, repeating it is safe"))
        } catch {
            context.logger.error("could not store a donation", metadata: ["donation": "\(id)", "error": "\(error)"])
            return refuse(.internalServerError, .init(.internal, "the donation could not be stored; nothing was changed, retry"))
        }
    }

    private func get(_ context: BrokerRequestContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        do {
            guard let donation = try await service.get(id: id) else {
                return refuse(.notFound, .init(.notFound, "no donation \(id)"))
            }
            return JSONResponse.encode(donation)
        } catch let error as DonationStoreUnavailable {
            return refuse(.serviceUnavailable, .init(.unavailable, "the donation store cannot be reached now (\(error)); retry"))
        } catch {
            context.logger.error("could not read a donation", metadata: ["donation": "\(id)", "error": "\(error)"])
            return refuse(.internalServerError, .init(.internal, "the donation could not be read; retry"))
        }
    }

    private func delete(_ context: BrokerRequestContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        do {
            guard try await service.delete(id: id) else {
                return refuse(.notFound, .init(.notFound, "no donation \(id)"))
            }
            return Response(status: .noContent)
        } catch let error as DonationStoreUnavailable {
            return refuse(.serviceUnavailable, .init(.unavailable, "the donation store cannot be reached now (\(error)); send the same DELETE again"))
        } catch {
            context.logger.error("could not delete a donation", metadata: ["donation": "\(id)", "error": "\(error)"])
            return refuse(.internalServerError, .init(.internal, "the donation could not be deleted; retry"))
        }
    }

    /// Names the field of the body that is missing or mistyped.
    static func describe(_ error: DecodingError) -> BrokerError {
        func path(_ keys: [any CodingKey]) -> String { keys.map(\.stringValue).joined(separator: ".") }
        switch error {
        case .keyNotFound(let key, let context):
            return .init(.badRequest, "\(path(context.codingPath + [key])) is required")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            if context.codingPath.isEmpty { return .init(.badRequest, "the body must be a JSON object") }
            return .init(.badRequest, "\(path(context.codingPath)) has the wrong type")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return .init(.badRequest, "the body is not valid JSON") }
            if context.codingPath.last?.stringValue == "state" {
                let states = DonationState.allCases.map(\.rawValue).joined(separator: ", ")
                return .init(.badRequest, "state must be one of \(states)")
            }
            return .init(.badRequest, "\(path(context.codingPath)) has an invalid value")
        @unknown default:
            return .init(.badRequest, "the body could not be read")
        }
    }
}
