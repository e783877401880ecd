import Foundation
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// The broker serves docs/openapi.yaml as it is in the repository.
final class OpenAPIDocumentTests: XCTestCase {
    func testTheServedDocumentIsDocsOpenAPIYAMLByteForByte() async throws {
        let file = try String(contentsOf: BrokerProcess.packageRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        XCTAssertEqual(OpenAPIDocument.text, file, "the compiled-in document is docs/openapi.yaml")
        let live = try await startBroker()
        let response = try await live.request(.get, "/openapi.yaml")
        try await live.stop()
        XCTAssertEqual(response.status, .ok)
        XCTAssertEqual(response.headers[.contentType], "application/yaml; charset=utf-8")
        XCTAssertEqual(String(buffer: response.body ?? .init()), file)
    }

    func testAMethodAKnownPathDoesNotServeGets405WithAllow() async throws {
        let live = try await startBroker()
        let trace = try await live.request(.trace, "/healthz")
        let post = try await live.backend(.post, "/v1/donations/d-1")
        let unknown = try await live.request(.get, "/nowhere")
        try await live.stop()
        XCTAssertEqual(trace.status, .methodNotAllowed)
        XCTAssertEqual(trace.headers[.allow], "GET")
        XCTAssertEqual(trace.error?.message, "TRACE is not served here; this path serves GET")
        XCTAssertEqual(post.status, .methodNotAllowed)
        XCTAssertEqual(post.headers[.allow], "GET, PUT, DELETE")
        XCTAssertEqual(unknown.status, .notFound, "an unknown path is still 404")
    }
}
