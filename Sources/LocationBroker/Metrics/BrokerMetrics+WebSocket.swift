import BrokerWebSocket

/// What the WebSocket transport reports, counted in the registry (`rejected` is the core's, shared).
extension BrokerMetrics: WebSocketMetrics {
    package func frameRead(_ kind: ClientFrameKind) {
        switch kind {
        case .publish: framesIn.publish.increment()
        case .subscribe: framesIn.subscribe.increment()
        case .unsubscribe: framesIn.unsubscribe.increment()
        case .invalid: framesIn.invalid.increment()
        }
    }

    package func framesWritten(_ count: Int) {
        framesOut.increment(by: Int64(count))
    }
}
