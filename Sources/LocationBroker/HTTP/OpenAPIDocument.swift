import BrokerHTTP
import Hummingbird

/// `GET /openapi.yaml`: the OpenAPI 3.1 description of the HTTP routes (docs/openapi.yaml), from which the Ponte
/// backend can generate a client. The file is compiled in (SwiftPM's `embedInCode` resource
/// Resources/openapi.yaml, a symbolic link to docs/openapi.yaml): one file, served wherever the binary is installed.
enum OpenAPIDocument {
    /// docs/openapi.yaml, byte for byte.
    static let text = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)
    private static let bytes = ByteBuffer(string: text)

    static func register(on router: Router<BrokerRequestContext>) {
        router.get("openapi.yaml") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: bytes))
        }
    }
}
