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
/// WebSocket `subscribe` by channel over the history `since` reads, for each of its channels on its own. A held
/// subscribe is parked in the hub as a subscriber (``PollWaker``) and woken when a position is kept, on this node
/// or, in a cluster, on another. The identity is always the token's; the SDK's `uuid` plays no part. A
/// one-channel timetoken is the channel's seq: a subscribe after timetoken T answers the positions with a seq
/// above T, and the seq of the last one as the next timetoken; several channels' timetoken is a
/// ``PubNubCursors`` entry.
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
    /// Where the subscribes of several channels stand.
    let cursors = PubNubCursors()
    /// How long a subscribe is held when there is nothing to answer.
    let hold: Duration
    let maxBodyBytes: Int

    /// The most messages one subscribe answer carries; the rest come with the next poll.
    static let maxMessagesPerAnswer = 100

    package init(
        verifier: TokenVerifier, hub: Hub, clock: WallClock, slots: LongPollSlots, budgets: PubNubRefusalBudgets,
        countRefusal: @escaping @Sendable (ErrorCode) -> Void, isDraining: @escaping @Sendable () -> Bool, hold: Duration,
        maxBodyBytes: Int
    ) {
        self.verifier = verifier
        self.hub = hub
        self.clock = clock
        self.slots = slots
        self.budgets = budgets
        self.countRefusal = countRefusal
        self.isDraining = isDraining
        self.hold = hold
        self.maxBodyBytes = maxBodyBytes
    }

    package func register(on router: Router<BrokerRequestContext>) {
        router.get("publish/:pubKey/:subKey/0/:channel/:callback/:message") { request, context in
            let message = context.parameters.get("message").flatMap { $0.removingPercentEncoding }
            return await publish(request, context, message: message.map { Data($0.utf8) })
        }
        router.post("publish/:pubKey/:subKey/0/:channel/:callback") { request, context in
            let body: ByteBuffer
            do throws(BodyRefusal) {
                body = try await request.collectBody(upTo: maxBodyBytes)
            } catch {
                return refuse(error.status, error.error)
            }
            return await publish(request, context, message: Data(body.readableBytesView))
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
            PublishOutcomeHeaders.set(tracking: outcome.tracking, untracked: outcome.untracked, on: &response.headers)
            return response
        case .failure(let error) where error.code == .rateLimited:
            return refuse(.tooManyRequests, error)
        case .failure(let error):
            return refuse(.internalServerError, error)
        }
    }


    // MARK: Subscribe

    /// The presence channel PubNub's SDKs add for each channel with `withPresence`.
    static let presenceSuffix = "-pnpres"

    private func subscribe(_ request: Request, _ context: BrokerRequestContext) async -> Response {
        let verified: VerifiedIdentity
        switch identity(of: request, context) {
        case .refused(let refusal): return refusal
        case .verified(let found): verified = found
        }
        let identity = verified.identity
        let query = request.uri.queryParameters
        if query.get("channel-group") != nil {
            return refuse(.badRequest, .init(.badRequest, "channel groups are not supported; subscribe to the volunteers' channels"))
        }
        // Presence channels are answered with nothing (who is online is not offered over these endpoints), so an
        // app that asks for presence still receives its positions.
        var names: [String] = []
        for name in Self.channels(context.parameters.get("channels")) where !name.hasSuffix(Self.presenceSuffix) && !names.contains(name) {
            names.append(name)
        }
        let most = hub.settings.maxSubscriptionsPerConnection
        guard names.count <= most else {
            return refuse(.badRequest, .init(.limitReached, "a subscribe may name at most \(most) channels"))
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
        // Each channel gated on its own; one refused refuses the subscribe and is named, as Access Manager does.
        var latest: [String: Int64] = [:]
        var refused: [String] = []
        var refusal: BrokerError?
        for name in names {
            switch hub.positions(on: name, after: .max, for: identity) {
            case .failure(let error):
                refused.append(name)
                refusal = refusal ?? error
            case .success(let polled):
                // Never 0, which would make the SDK shake hands again: 1 stands before every seq.
                latest[name] = polled.latestVisibleSeq ?? 1
            }
        }
        if let refusal { return refuseCharged(identity, .forbidden, refusal, channels: refused) }
        let handshake = { PubNubAnswers.subscribe(timetoken: self.timetoken(latest, for: identity), subscribeKey: subscribeKey, messages: []) }
        guard timetoken != 0, let known = start(of: timetoken, on: names, for: identity) else { return handshake() }
        // Where the caller stands on each channel; a channel it did not stand on yet starts from now.
        var after = latest
        for (name, seq) in known {
            guard let newest = latest[name] else { continue }
            // Not a seq of a position the caller may see now (one from PubNub itself or `/time/0`, another
            // channel's, one whose positions a pause purged): from now, at once, from what the caller may see
            // only, so that it reveals nothing of the channel's other seqs.
            if seq == 1 || seq <= newest { after[name] = seq }
        }
        if names.count == 1 && after != known { return handshake() }
        let waker = PollWaker()
        let holdEndsAt = ContinuousClock.now.advanced(by: hold)
        guard let slot = slots.take(identity, waker: waker, holdEndsAt: holdEndsAt) else {
            return refuse(
                .tooManyRequests,
                .init(.limitReached, "at most \(slots.perIdentity) subscribe requests of one identity are held at once (\(slots.total) in all); retry shortly"))
        }
        defer { slots.release(slot) }
        return await longPoll(
            names: names, after: after, timetoken: timetoken, identity: verified, subscribeKey: subscribeKey, waker: waker, holdEndsAt: holdEndsAt,
            context: context)
    }

    /// Where a timetoken says the caller stood: a channel's seq for a one-channel subscribe, a kept entry
    /// (``PubNubCursors``) for several; `nil` when it names nothing known.
    private func start(of timetoken: Int64, on names: [String], for identity: String) -> [String: Int64]? {
        if names.isEmpty { return [:] }
        if timetoken >= PubNubCursors.floor { return cursors.seqs(of: timetoken, for: identity) }
        guard names.count == 1, let name = names.first else { return nil }
        return [name: timetoken]
    }

    /// The timetoken that names where the caller stands.
    private func timetoken(_ seqs: [String: Int64], for identity: String) -> Int64 {
        if seqs.count == 1, let seq = seqs.values.first { return seq }
        // No channel (only presence channels were asked for): nothing to stand on.
        if seqs.isEmpty { return 1 }
        return cursors.keep(seqs, for: identity)
    }

    /// Whether a token has expired, by the one rule of the broker: its `exp` plus ``TokenLeeway``, the same for a
    /// new request (``TokenVerifier``), a held poll and a WebSocket.
    private func hasExpired(_ verified: VerifiedIdentity) -> Bool {
        clock.now() / 1000 >= verified.expiresAt + TokenLeeway.seconds
    }

    /// The refusal of a token that expired while its poll was held: the one a new request with it gets, without
    /// channels (the token is at fault, not what it asks for), so that an app renews its token and resubscribes.
    static let expiredToken = BrokerError(.unauthorized, "the token has expired")

    /// Answers the positions after `after` as soon as there are some. Until then the request is parked in the hub,
    /// which wakes it when a position of one of its channels is kept, or a donation or the connection changes; it
    /// is answered empty when its hold has passed (``LongPollSlots`` wakes it), the client goes, or the broker
    /// drains, and refused when the token expires (``hasExpired(_:)``; the hub's sweep of expired tokens wakes it)
    /// or a donation stops allowing it (403, the channel named). No poll has a timer of its own.
    private func longPoll(
        names: [String], after start: [String: Int64], timetoken: Int64, identity verified: VerifiedIdentity, subscribeKey: String,
        waker: PollWaker, holdEndsAt: ContinuousClock.Instant, context: BrokerRequestContext
    ) async -> Response {
        let poll = hub.park(verified, sink: waker, logger: context.logger)
        defer { hub.unpark(poll) }
        for name in names {
            if let refusal = hub.watch(poll, channel: name) {
                return refuseCharged(verified.identity, .forbidden, refusal, channels: [name])
            }
        }
        let peer = await PeerClosure.of(context.channel)
        peer?.whenGone { waker.wake() }
        defer { peer?.clear() }
        let unchanged = names.count == 1 ? timetoken : nil
        while true {
            if hasExpired(verified) { return refuse(.forbidden, Self.expiredToken) }
            var messages: [PubNubAnswers.Message] = []
            var next = start
            for name in names {
                switch hub.positions(on: name, after: start[name] ?? .max, for: verified.identity) {
                case .failure(let error):
                    return refuseCharged(verified.identity, .forbidden, error, channels: [name])
                case .success(let polled):
                    let room = Self.maxMessagesPerAnswer - messages.count
                    guard room > 0, !polled.positions.isEmpty else { continue }
                    let answered = polled.positions.prefix(room)
                    let shape = shapes.shape(of: name)
                    messages += answered.map { .init(channel: name, seq: $0.seq, payload: PubNubPosition.message($0.position, shape: shape)) }
                    next[name] = answered.last?.seq ?? next[name]
                }
            }
            if !messages.isEmpty {
                return PubNubAnswers.subscribe(timetoken: self.timetoken(next, for: verified.identity), subscribeKey: subscribeKey, messages: messages)
            }
            if ContinuousClock.now >= holdEndsAt || peer?.isGone == true || isDraining() || waker.isClosing || Task.isCancelled {
                return PubNubAnswers.subscribe(
                    timetoken: unchanged ?? self.timetoken(start, for: verified.identity), subscribeKey: subscribeKey, messages: [])
            }
            await waker.wait()
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
