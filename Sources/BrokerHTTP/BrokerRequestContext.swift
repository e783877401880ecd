import Hummingbird

/// The request context of every HTTP route.
package struct BrokerRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage

    package init(source: Source) {
        self.coreContext = .init(source: source)
    }
}
