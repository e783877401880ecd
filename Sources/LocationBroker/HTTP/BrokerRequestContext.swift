import Hummingbird

/// The request context of every HTTP route.
struct BrokerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage

    init(source: Source) {
        self.coreContext = .init(source: source)
    }
}
