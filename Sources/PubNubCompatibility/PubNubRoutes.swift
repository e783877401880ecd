import BrokerAuth
import BrokerCore
import BrokerHTTP
import BrokerProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// PubNub's REST endpoints over the hub, for PubNub's own SDKs pointed at the broker (`origin`) with a broker
/// client token as their auth key: publish (GET and POST), subscribe as a long poll, `/time/0`, and presence's
/// leave and heartbeat (accepted, without effect). docs/PROTOCOL.md, "PubNub-compatible endpoints", is the
/// contract.
///
/// The rules are the WebSocket's, by the same code: a publish goes through `Position.validationError` and
/// `Hub.publish(as:)` on the token's own channel; a subscribe reads `Hub.positions(on:after:for:)`, the gate of a
/// WebSocket `subscribe` by channel over the history `since` reads. The identity is always the token's; the
/// SDK's `uuid` plays no part. A timetoken is a channel's seq: a subscribe after timetoken T answers the
/// positions with a seq above T, and the seq of the last one as the next timetoken.
package struct PubNubRoutes: Sendable {
    let verifier: TokenVerifier
    let hub: Hub
    let clock: WallClock
    let slots: LongPollSlots
    /// How each volunteer's PubNub app spells a position, for its donors.
    let shapes = PubNubShapes()
    let budgets: PubNubRefusalBudgets
    let countRefusal: @Sendable (ErrorCode) -> Void
    let isDraining: @Sendable () -> Bool
    /// How long a subscribe is held when there is nothing to answer.
    let hold: Duration
    /// How often a held subscribe looks again at the channel (and at its donor's donation and token).
    let pollInterval: Duration
    let maxBodyBytes: Int
    /// Set on a cluster node, where a channel's history holds other nodes' positions only for WebSocket subscribers.
    let clustered: Bool

    /// The most messages one subscribe answer carries; the rest come with the next poll.
    static let maxMessagesPerAnswer = 100

    package init(
        verifier: TokenVerifier, hub: Hub, clock: WallClock, slots: LongPollSlots, budgets: PubNubRefusalBudgets,
        countRefusal: @escaping @Sendable (ErrorCode) -> Void, isDraining: @escaping @Sendable () -> Bool, hold: Duration,
        pollInterval: Duration = .milliseconds(200), maxBodyBytes: Int, clustered: Bool
    ) {
        self.verifier = verifier
        self.hub = hub
        self.clock = clock
        self.slots = slots
        self.budgets = budgets
        self.countRefusal = countRefusal
        self.isDraining = isDraining
        self.hold = hold
        self.pollInterval = pollInterval
        self.maxBodyBytes = maxBodyBytes
        self.clustered = clustered
    }

    package func register(on router: Router<BrokerRequestContext>) {
        router.get("publish/:pubKey/:subKey/0/:channel/:callback/:message") { request, context in
            let message = context.parameters.get("message").flatMap { $0.removingPercentEncoding }
            return await publish(request, context, message: message.map { Data($0.utf8) })
        }
        router.post("publish/:pubKey/:subKey/0/:channel/:callback") { request, context in
            do {
                let body = try await request.body.collect(upTo: maxBodyBytes)
                return await publish(request, context, message: Data(body.readableBytesView))
            } catch is NIOTooManyBytesError {
                return refuse(.contentTooLarge, .init(.tooLarge, "the body is larger than \(maxBodyBytes) bytes"))
            } catch {
                return refuse(.badRequest, .init(.badRequest, "the body could not be read"))
            }
        }
        router.get("v2/subscribe/:subKey/:channels/0") { request, context in await subscribe(request, context) }
        router.get("time/0") { _, _ in PubNubAnswers.time(nowMilliseconds: clock.now()) }
        router.get("v2/presence/sub-key/:subKey/channel/:channels/leave") { request, context in
            await presence(request, context, action: "leave")
        }
        router.get("v2/presence/sub-key/:subKey/channel/:channels/heartbeat") { request, context in
            await presence(request, context, action: nil)
        }
    }

    // MARK: Who is asking

    private func refuse(_ status: HTTPResponse.Status, _ error: BrokerError, channels: [String] = []) -> Response {
        countRefusal(error.code)
        return PubNubAnswers.error(status, error, channels: channels)
    }

    /// Who sent a request: the identity of its token, or the answer that refuses it.
    private enum Caller {
        case verified(VerifiedIdentity)
        case refused(Response)
    }

    /// The identity of the request's `auth` token, or the answer that refuses it. A refused token is charged to
    /// the address; an address past its budget is refused before its token is read.
    private func identity(of request: Request, _ context: BrokerRequestContext) -> Caller {
        if isDraining() {
            return .refused(refuse(.serviceUnavailable, .init(.unavailable, "the broker is shutting down; retry shortly")))
        }
        if let address = context.remoteAddress, budgets.addressExhausted(address) {
            return .refused(
                refuse(.tooManyRequests, .init(.limitReached, "too many refused requests from your address; retry in \(budgets.secondsPerRefusal) s")))
        }
        guard let token = request.uri.queryParameters.get("auth"), !token.isEmpty else {
            if let address = context.remoteAddress { budgets.chargeAddress(address) }
            return .refused(refuse(.forbidden, .init(.unauthorized, "no auth key: set the SDK's authKey to your broker token")))
        }
        switch verifier.verify(token) {
        case .failure(let error) where error.code == .unavailable:
            return .refused(refuse(.serviceUnavailable, error))
        case .failure(let error):
            if let address = context.remoteAddress { budgets.chargeAddress(address) }
            // 403, not 401: PubNub's SDKs report a 403 as access denied and stop retrying.
            return .refused(refuse(.forbidden, error))
        case .success(let verified):
            if budgets.identityExhausted(verified.identity) {
                return .refused(
                    refuse(
                        .tooManyRequests,
                        .init(.limitReached, "\(verified.identity) was refused too often; retry in \(budgets.secondsPerRefusal) s")))
            }
            return .verified(verified)
        }
    }

    /// A refusal charged to the identity's budget, as a refused WebSocket frame is.
    private func refuseCharged(
        _ identity: String, _ status: HTTPResponse.Status, _ error: BrokerError, channels: [String] = []
    ) -> Response {
        budgets.chargeIdentity(identity)
        return refuse(status, error, channels: channels)
    }

    /// The channel names of a path segment (comma-separated, percent-encoded).
    private static func channels(_ segment: String?) -> [String] {
        (segment?.removingPercentEncoding ?? "").split(separator: ",", omittingEmptySubsequences: true).map(String.init)
    }

    // MARK: Publish

    private func publish(_ request: Request, _ context: BrokerRequestContext, message: Data?) async -> Response {
        let verified: VerifiedIdentity
        switch identity(of: request, context) {
        case .refused(let refusal): return refusal
        case .verified(let found): verified = found
        }
        let identity = verified.identity
        let channel = context.parameters.get("channel")?.removingPercentEncoding ?? ""
        guard channel == identity else {
            return refuseCharged(identity, .forbidden, .init(.forbidden, "you may publish only on your own channel, \(identity)"), channels: [channel])
        }
        guard let message else { return refuse(.badRequest, .init(.badRequest, "the message is not valid percent-encoded UTF-8")) }
        let position: Position
        switch PubNubPosition.read(message, now: clock.now()) {
        case .failure(let error): return refuseCharged(identity, .badRequest, error)
        case .success(let valid):
            position = valid.position
            shapes.remember(valid.shape, for: identity)
        }
        switch hub.publish(as: identity, position: position) {
        case .success(let outcome):
            // Taken, even when kept for nobody (as OwnTracks): an error would make the SDK send it again.
            var response = PubNubAnswers.sent(timetoken: outcome.seq ?? 0)
            response.headers[Self.trackingHeader] = outcome.tracking ? "true" : "false"
            if let reason = outcome.untracked { response.headers[Self.untrackedReasonHeader] = reason.rawValue }
            return response
        case .failure(let error) where error.code == .rateLimited:
            return refuse(.tooManyRequests, error)
        case .failure(let error):
            return refuse(.internalServerError, error)
        }
    }

    /// `true` when the fix was kept for a trackable donation, `false` when it was kept for nobody.
    static let trackingHeader = HTTPField.Name("X-Location-Broker-Tracking")!
    /// Why a fix was kept for nobody: the `reason` of a WebSocket `ack` (`before-window`, `too-old`...).
    static let untrackedReasonHeader = HTTPField.Name("X-Location-Broker-Untracked-Reason")!

    // MARK: Subscribe

    private func subscribe(_ request: Request, _ context: BrokerRequestContext) async -> Response {
        let verified: VerifiedIdentity
        switch identity(of: request, context) {
        case .refused(let refusal): return refusal
        case .verified(let found): verified = found
        }
        let identity = verified.identity
        let names = Self.channels(context.parameters.get("channels"))
        let query = request.uri.queryParameters
        if query.get("channel-group") != nil {
            return refuse(.badRequest, .init(.badRequest, "channel groups are not supported; subscribe to the volunteer's channel"))
        }
        guard names.count == 1, let channel = names.first else {
            return refuse(
                .badRequest,
                .init(.badRequest, "subscribe to exactly one channel per request: a timetoken is one channel's position; use one subscription per volunteer"))
        }
        if channel.hasSuffix("-pnpres") {
            return refuse(.badRequest, .init(.badRequest, "presence channels are not supported; online state is not offered over the PubNub endpoints"))
        }
        if clustered {
            return refuse(
                .notImplemented, .init(.unavailable, "PubNub subscribe is not available on a cluster node; use the WebSocket at /v1/ws"))
        }
        let subscribeKey = context.parameters.get("subKey")?.removingPercentEncoding ?? ""
        let timetoken: Int64
        switch query.get("tt") {
        case nil, "", "0": timetoken = 0
        case let text?:
            guard let value = Int64(text), value > 0 else {
                return refuse(.badRequest, .init(.badRequest, "tt must be a timetoken this broker gave, or 0"))
            }
            timetoken = value
        }
        if timetoken == 0 {
            // The handshake: where the caller stands now, without the positions up to there.
            switch hub.positions(on: channel, after: .max, for: identity) {
            case .failure(let error): return refuseCharged(identity, .forbidden, error, channels: [channel])
            case .success(let polled):
                // Never 0, which would make the SDK shake hands again: 1 stands before every seq.
                return PubNubAnswers.subscribe(timetoken: polled.latestVisibleSeq ?? 1, channel: channel, subscribeKey: subscribeKey, messages: [])
            }
        }
        guard slots.take(identity) else {
            return refuse(
                .tooManyRequests,
                .init(.limitReached, "at most \(slots.perIdentity) subscribe requests of one identity are held at once (\(slots.total) in all); retry shortly"))
        }
        defer { slots.release(identity) }
        return await longPoll(channel: channel, after: timetoken, identity: verified, subscribeKey: subscribeKey)
    }

    /// Answers the positions after `timetoken` as soon as there are some; holds the request until then, or until
    /// ``hold`` has passed (empty, the same timetoken), the token expires or the donation stops allowing it (403),
    /// or the broker drains (empty). A timetoken above every position the caller may see (other than `1`) is
    /// answered at once as a handshake.
    private func longPoll(channel: String, after timetoken: Int64, identity verified: VerifiedIdentity, subscribeKey: String) async -> Response {
        let deadline = ContinuousClock.now.advanced(by: hold)
        while true {
            if clock.now() / 1000 >= verified.expiresAt {
                return refuse(.forbidden, .init(.unauthorized, "your token has expired; get a new one"), channels: [channel])
            }
            switch hub.positions(on: channel, after: timetoken, for: verified.identity) {
            case .failure(let error):
                return refuseCharged(verified.identity, .forbidden, error, channels: [channel])
            case .success(let polled) where !polled.positions.isEmpty:
                let answered = polled.positions.prefix(Self.maxMessagesPerAnswer)
                let shape = shapes.shape(of: channel)
                return PubNubAnswers.subscribe(
                    timetoken: answered.last?.seq ?? timetoken, channel: channel, subscribeKey: subscribeKey,
                    messages: answered.map { (seq: $0.seq, payload: PubNubPosition.message($0.position, shape: shape)) })
            case .success(let polled) where timetoken != 1 && timetoken > (polled.latestVisibleSeq ?? 0):
                // Not a timetoken of a position the caller may see now: one from PubNub itself or `/time/0`, another
                // channel's, or one whose positions a pause purged. Answered as a handshake, at once, from what the
                // caller may see only (so it reveals nothing of the channel's other seqs); waiting for the channel's
                // seqs to pass it could take forever.
                return PubNubAnswers.subscribe(
                    timetoken: polled.latestVisibleSeq ?? 1, channel: channel, subscribeKey: subscribeKey, messages: [])
            case .success:
                break
            }
            let now = ContinuousClock.now
            if now >= deadline || isDraining() || Task.isCancelled {
                return PubNubAnswers.subscribe(timetoken: timetoken, channel: channel, subscribeKey: subscribeKey, messages: [])
            }
            try? await Task.sleep(until: min(deadline, now.advanced(by: pollInterval)), clock: .continuous)
        }
    }

    // MARK: Presence

    /// Leave and heartbeat, from a caller with a valid token: accepted; who is online is the volunteer's
    /// publishing, not the SDK's presence.
    private func presence(_ request: Request, _ context: BrokerRequestContext, action: String?) async -> Response {
        switch identity(of: request, context) {
        case .refused(let refusal): return refusal
        case .verified: return PubNubAnswers.presence(action: action)
        }
    }
}
