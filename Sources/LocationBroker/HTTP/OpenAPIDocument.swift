import Hummingbird

/// `GET /openapi.yaml`: the OpenAPI 3.1 description of the HTTP routes (docs/openapi.yaml), from which the Ponte
/// backend can generate a client. The text is compiled in (``routes`` and ``components``, written by
/// scripts/embed-openapi).
enum OpenAPIDocument {
    /// docs/openapi.yaml, byte for byte.
    static let text = routes + components

    static func register(on router: Router<BrokerRequestContext>) {
        router.get("openapi.yaml") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }
}
