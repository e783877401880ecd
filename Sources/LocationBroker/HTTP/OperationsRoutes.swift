import BrokerHTTP
import Hummingbird

/// `GET /healthz` and `GET /metrics`.
struct OperationsRoutes: Sendable {
    let metrics: BrokerMetrics
    let isDraining: @Sendable () -> Bool

    func register(on router: Router<BrokerRequestContext>) {
        router.get("healthz") { _, _ -> Response in
            if isDraining() {
                return Response(status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "draining\n")))
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition()))
            )
        }
    }
}
