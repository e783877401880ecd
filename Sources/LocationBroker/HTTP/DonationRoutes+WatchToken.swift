import BrokerHTTP
import BrokerProtocol
import BrokerStorage
import Hummingbird

extension DonationRoutes {
    /// `POST /v1/donations/{id}/watch-token`: a link that lets the donor watch this one donation, made for its
    /// current incarnation. 404 when the donation does not exist or has ended.
    func watchToken(_ context: BrokerRequestContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        do {
            guard let donation = try await service.watchable(id: id) else {
                return refuse(.notFound, .init(.notFound, "no donation \(id) that can be watched: it does not exist or has ended"))
            }
            let (token, expiresAt) = try await watchLinks.mint(for: donation)
            metrics.watchTokensIssued.increment()
            return JSONResponse.encode(WatchLink(token: token, expiresAt: expiresAt * 1000, url: "/track/\(id)#token=\(token)"))
        } catch let error as DonationStoreUnavailable {
            return refuse(.serviceUnavailable, .init(.unavailable, "the donation store cannot be reached now (\(error)); retry"))
        } catch {
            context.logger.error("could not make a watch token", metadata: ["donation": "\(id)", "error": "\(error)"])
            return refuse(.internalServerError, .init(.internal, "the watch token could not be made; retry"))
        }
    }
}
