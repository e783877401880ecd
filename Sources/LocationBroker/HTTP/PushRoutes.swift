import BrokerAuth
import BrokerCore
import BrokerHTTP
import BrokerProtocol
import BrokerStorage
import Foundation
import Hummingbird

/// The tracking page's Web Push: `GET /v1/push/key` (the VAPID public key), and `POST` / `DELETE
/// /v1/push/subscriptions`, authorised by the page's watch link, which binds a subscription to that one
/// donation's incarnation.
///
/// The broker POSTs to a subscription's endpoint, so an endpoint is accepted only on a push service named in
/// `push_service_hosts`: a donor's link can never make the broker send requests elsewhere.
struct PushRoutes: Sendable {
    /// The VAPID public key (base64url, uncompressed point), or `nil` when Web Push is off.
    let publicKey: String?
    let watchLinks: WatchTokenVerifier
    let outbox: (any EventOutbox)?
    let allowedHosts: [String]
    let metrics: BrokerMetrics
    let clock: @Sendable () -> Int64
    /// Browsers one donation's pushes may go to.
    var subscriptionsPerDonation = 5
    /// A subscription's JSON is a few hundred bytes.
    var maxBodyBytes = 4_096

    func register(on router: Router<BrokerRequestContext>) {
        router.get("v1/push/key") { _, _ in key() }
        router.post("v1/push/subscriptions") { request, _ in await subscribe(request) }
        router.delete("v1/push/subscriptions") { request, _ in await unsubscribe(request) }
    }

    private func refuse(_ status: HTTPResponse.Status, _ error: BrokerError) -> Response {
        metrics.reject(error.code)
        return JSONResponse.error(status, error)
    }

    private var disabled: Response {
        refuse(.notFound, .init(.notFound, "Web Push is not set up on this broker (its operator has not set push_subject)"))
    }

    private func key() -> Response {
        guard let publicKey else { return disabled }
        return JSONResponse.encode(["public_key": publicKey])
    }

    /// The body of `POST` and `DELETE`: what `PushSubscription.toJSON()` gives (`DELETE` needs the endpoint only).
    private struct SubscriptionBody: Decodable {
        struct Keys: Decodable {
            let p256dh: String
            let auth: String
        }
        let endpoint: String
        let keys: Keys?
    }

    /// A request turned away, with its answer.
    private struct Refused: Error {
        let response: Response
    }

    /// Checks the watch link and reads the body.
    private func admit(_ request: Request) async -> Result<(WatchScope, SubscriptionBody), Refused> {
        guard let token = request.headers.bearerCredential else {
            return .failure(Refused(response: refuse(.unauthorized, .init(.unauthorized, "send the page's watch link as Authorization: Bearer <token>"))))
        }
        guard publicKey != nil, outbox != nil else { return .failure(Refused(response: disabled)) }
        let scope: WatchScope
        switch await watchLinks.verify(token, now: clock() / 1000) {
        case .success(let verified):
            guard let watch = verified.watch else {
                return .failure(Refused(response: refuse(.unauthorized, .init(.unauthorized, "only a watch link may subscribe to a donation's pushes"))))
            }
            scope = watch
        case .failure(let error):
            return .failure(Refused(response: refuse(error.code == .unavailable ? .serviceUnavailable : .unauthorized, error)))
        }
        let bytes: ByteBuffer
        do {
            bytes = try await request.collectBody(upTo: maxBodyBytes)
        } catch {
            return .failure(Refused(response: refuse(error.status, error.error)))
        }
        do {
            return .success((scope, try JSONDecoder().decode(SubscriptionBody.self, from: Data(buffer: bytes))))
        } catch let error as DecodingError {
            return .failure(Refused(response: refuse(.badRequest, DonationRoutes.describe(error))))
        } catch {
            return .failure(Refused(response: refuse(.badRequest, .init(.badRequest, "the body is not valid JSON"))))
        }
    }

    private func subscribe(_ request: Request) async -> Response {
        let scope: WatchScope
        let body: SubscriptionBody
        switch await admit(request) {
        case .success(let admitted): (scope, body) = admitted
        case .failure(let refused): return refused.response
        }
        guard let outbox else { return disabled }
        if let refusal = PushSubscriptionRule.refusal(endpoint: body.endpoint, allowedHosts: allowedHosts) {
            return refuse(.forbidden, .init(.forbidden, refusal))
        }
        guard let keys = body.keys else { return refuse(.badRequest, .init(.badRequest, "keys is required (keys.p256dh and keys.auth)")) }
        if let refusal = PushSubscriptionRule.refusal(p256dh: keys.p256dh, auth: keys.auth) {
            return refuse(.badRequest, .init(.badRequest, refusal))
        }
        let record = PushSubscriptionRecord(
            donation: scope.donation, incarnation: scope.incarnation, endpoint: body.endpoint, p256dh: keys.p256dh, auth: keys.auth,
            createdAt: clock())
        do {
            guard try await outbox.addSubscription(record, limit: subscriptionsPerDonation) else {
                return refuse(
                    .tooManyRequests,
                    .init(.limitReached, "this donation already sends pushes to \(subscriptionsPerDonation) browsers; turn one off first"))
            }
        } catch {
            return refuse(.serviceUnavailable, .init(.unavailable, "the subscription could not be stored now; retry"))
        }
        metrics.events.subscriptionsAdded.increment()
        return JSONResponse.encode(["donation": scope.donation], status: .created)
    }

    private func unsubscribe(_ request: Request) async -> Response {
        let scope: WatchScope
        let body: SubscriptionBody
        switch await admit(request) {
        case .success(let admitted): (scope, body) = admitted
        case .failure(let refused): return refused.response
        }
        guard let outbox else { return disabled }
        do {
            // Only this donation's subscription is removed with its link: the same browser may hold others'.
            try await outbox.removeSubscription(endpoint: body.endpoint, donation: scope.donation)
        } catch {
            return refuse(.serviceUnavailable, .init(.unavailable, "the subscription could not be removed now; retry"))
        }
        return Response(status: .noContent)
    }
}
