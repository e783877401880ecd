import Atomics
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP proxy between a client and a broker that breaks the path on demand, as mobile networks do.
///
/// - ``silence()``: the connections it holds go silent both ways without a FIN or an RST (a phone that changed
///   networks); they stay open until ``stop()``. New connections are forwarded again.
/// - ``reset()``: the connections it holds are cut with an RST.
/// - ``refuse(for:)``: new connections are cut with an RST at once, for a while.
/// - ``delay``: every byte waits this long in each direction (a slow, far-away network), in order.
/// - ``target``: the broker's port, changed when a broker restarts on another port.
final class FaultProxy: Sendable {
    /// One client connection and its broker connection.
    private final class Link: Sendable {
        let client: any Channel
        let broker = NIOLockedValueBox<(any Channel)?>(nil)
        let silent = ManagedAtomic<Bool>(false)

        init(client: any Channel) {
            self.client = client
        }
    }

    private struct State {
        var target: Int
        var refusingUntil: ContinuousClock.Instant?
        var links: [ObjectIdentifier: Link] = [:]
        var accepted = 0
    }

    private let state: NIOLockedValueBox<State>
    private let server = NIOLockedValueBox<(any Channel)?>(nil)
    /// Milliseconds each chunk waits before it is forwarded, in each direction.
    private let delayMilliseconds = ManagedAtomic<Int64>(0)

    /// How long every chunk waits before it is forwarded, in each direction; zero forwards at once.
    var delay: Duration {
        get { .milliseconds(delayMilliseconds.load(ordering: .relaxed)) }
        set { delayMilliseconds.store(Int64(newValue / .milliseconds(1)), ordering: .relaxed) }
    }

    private init(target: Int) {
        state = NIOLockedValueBox(State(target: target))
    }

    /// Starts a proxy on a free port of 127.0.0.1 towards `127.0.0.1:target`.
    static func start(target: Int) async throws -> FaultProxy {
        let proxy = FaultProxy(target: target)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { channel in proxy.accept(channel) }
            .bind(host: "127.0.0.1", port: 0).get()
        proxy.server.withLockedValue { $0 = channel }
        return proxy
    }

    /// The proxy's port.
    var port: Int { server.withLockedValue { $0?.localAddress?.port } ?? 0 }

    /// The address a client connects to.
    var webSocketURL: String { "ws://127.0.0.1:\(port)/v1/ws" }

    /// The broker port new connections go to.
    var target: Int {
        get { state.withLockedValue { $0.target } }
        set { state.withLockedValue { $0.target = newValue } }
    }

    /// How many connections the proxy accepted (refused ones included).
    var accepted: Int { state.withLockedValue { $0.accepted } }

    /// How many connections it holds now, silent ones included.
    var held: Int { state.withLockedValue { $0.links.count } }

    /// The held connections go silent both ways, without closing.
    func silence() {
        let links = state.withLockedValue { state in Array(state.links.values) }
        for link in links { link.silent.store(true, ordering: .relaxed) }
    }

    /// The held connections are cut with an RST on both sides.
    func reset() async {
        let links = state.withLockedValue { state in
            defer { state.links.removeAll() }
            return Array(state.links.values)
        }
        for link in links {
            link.silent.store(true, ordering: .relaxed)
            await Self.cut(link.client)
            if let broker = link.broker.withLockedValue({ $0 }) { await Self.cut(broker) }
        }
    }

    /// New connections are cut at once for `duration`.
    func refuse(for duration: Duration) {
        state.withLockedValue { $0.refusingUntil = .now + duration }
    }

    /// Closes everything, the listening socket too.
    func stop() async {
        let links = state.withLockedValue { state in
            defer { state.links.removeAll() }
            return Array(state.links.values)
        }
        for link in links {
            try? await link.client.close()
            try? await link.broker.withLockedValue({ $0 })?.close()
        }
        try? await server.withLockedValue({ $0 })?.close()
    }

    // MARK: Plumbing

    private func accept(_ client: any Channel) -> EventLoopFuture<Void> {
        let (target, refusing) = state.withLockedValue { state -> (Int, Bool) in
            state.accepted += 1
            return (state.target, state.refusingUntil.map { ContinuousClock.now < $0 } ?? false)
        }
        if refusing {
            let promise = client.eventLoop.makePromise(of: Void.self)
            promise.completeWithTask { await Self.cut(client) }
            return promise.futureResult
        }
        let link = Link(client: client)
        let delay: @Sendable () -> Int64 = { self.delayMilliseconds.load(ordering: .relaxed) }
        state.withLockedValue { $0.links[ObjectIdentifier(link)] = link }
        client.closeFuture.whenComplete { _ in
            // A silent link stays listed: its broker side is closed at stop().
            if !link.silent.load(ordering: .relaxed) { _ = self.state.withLockedValue { $0.links.removeValue(forKey: ObjectIdentifier(link)) } }
        }
        return ClientBootstrap(group: client.eventLoop)
            .channelInitializer { broker in
                broker.eventLoop.makeCompletedFuture { try broker.pipeline.syncOperations.addHandler(Forwarder(link: link, to: client, delayMilliseconds: delay)) }
            }
            .connect(host: "127.0.0.1", port: target)
            .flatMap { broker in
                link.broker.withLockedValue { $0 = broker }
                return client.eventLoop.makeCompletedFuture {
                    try client.pipeline.syncOperations.addHandler(Forwarder(link: link, to: broker, delayMilliseconds: delay))
                }.flatMap { client.setOption(.autoRead, value: true) }
            }
            .flatMapError { _ in client.close() }
    }

    /// Closes `channel` with an RST (SO_LINGER 0) instead of a FIN.
    private static func cut(_ channel: any Channel) async {
        try? await (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        try? await channel.close()
    }

    /// Copies what one side sends to the other, unless the link is silent; a close on one side closes the other.
    private final class Forwarder: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        private let link: Link
        private let partner: any Channel
        private let delayMilliseconds: @Sendable () -> Int64

        init(link: Link, to partner: any Channel, delayMilliseconds: @escaping @Sendable () -> Int64) {
            self.link = link
            self.partner = partner
            self.delayMilliseconds = delayMilliseconds
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !link.silent.load(ordering: .relaxed) else { return }
            let bytes = Self.unwrapInboundIn(data)
            let delay = delayMilliseconds()
            guard delay > 0 else { return partner.writeAndFlush(bytes, promise: nil) }
            // Chunks read later are due later: the order holds.
            let partner = partner
            context.eventLoop.scheduleTask(in: .milliseconds(delay)) { partner.writeAndFlush(bytes, promise: nil) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !link.silent.load(ordering: .relaxed) { partner.close(promise: nil) }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
