import Hummingbird
import NIOCore

/// The request context of every HTTP route.
package struct BrokerRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The client's address, that refusals before a token is trusted are charged to.
    package let remoteAddress: SocketAddress?
    /// The connection the request came on (a long poll learns from it when the client goes: ``PeerClosure``).
    package let channel: any Channel

    package init(source: Source) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }
}
