// Signing keys make the broker's internal `TokenClaims`, which only a debug build exposes (see LiveBroker.swift).
#if DEBUG
import BrokerClient
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import Logging
import NIOCore
import ServiceLifecycle
import NIOConcurrencyHelpers
import Atomics
import XCTest

@testable import BrokerAuth
@testable import LocationBroker

/// An identity provider in the test process: an HTTP server on a free port serving a JWKS that the test
/// changes as it goes (keys rotated, answers refused), and the signing keys behind it.
final class JWKSServer: Sendable {
    /// What `GET /jwks.json` answers.
    struct Answer: Sendable {
        var keys: [String] = []
        var status: HTTPResponse.Status = .ok
        var cacheControl: String? = "public, max-age=3600"
    }

    let port: Int
    private let state: SharedAnswer
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    var url: URL { URL(string: "http://127.0.0.1:\(port)/jwks.json")! }

    /// How many times the key set was asked for.
    var fetchCount: Int { state.fetches.load(ordering: .relaxed) }

    private init(port: Int, state: SharedAnswer, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.state = state
        self.group = group
        self.task = task
    }

    /// Starts serving `keys` (JWK JSON objects).
    static func start(keys: [String]) async throws -> JWKSServer {
        let state = SharedAnswer(Answer(keys: keys))
        let router = Router()
        router.get("jwks.json") { _, _ -> Response in
            let answer = state.fetched()
            var headers: HTTPFields = [.contentType: "application/json"]
            if let cacheControl = answer.cacheControl { headers[.cacheControl] = cacheControl }
            let body = #"{"keys":["# + answer.keys.joined(separator: ",") + "]}"
            return Response(status: answer.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "test-jwks")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        let listening = try await withDeadline("the JWKS server listens") { await ports.first { _ in true } }
        guard let port = listening else {
            try await task.value
            throw BrokerClientError("the JWKS server stopped before it listened")
        }
        return JWKSServer(port: port, state: state, group: group, task: task)
    }

    /// The answer and the count of requests, shared with the route.
    private final class SharedAnswer: Sendable {
        let answer: NIOLockedValueBox<Answer>
        let fetches = ManagedAtomic<Int>(0)

        init(_ answer: Answer) { self.answer = NIOLockedValueBox(answer) }

        func fetched() -> Answer {
            fetches.wrappingIncrement(by: 1, ordering: .relaxed)
            return answer.withLockedValue { $0 }
        }
    }

    /// Changes what the server answers from now on.
    func change(_ adjust: (inout Answer) -> Void) {
        state.answer.withLockedValue { adjust(&$0) }
    }

    /// Stops the server: from now on, connections to its port are refused.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// A signing key of the test identity provider, and its public JWK.
struct TestSigningKey: Sendable {
    let kid: String
    let collection: JWTKeyCollection
    /// The public key as a JWK JSON object.
    let jwk: String

    /// A fresh P-256 key; `alg` in the JWK only when `withAlg`.
    static func es256(kid: String, withAlg: Bool = true) async throws -> TestSigningKey {
        let key = ES256PrivateKey()
        let collection = JWTKeyCollection()
        await collection.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        let parameters = try XCTUnwrap(key.parameters)
        let alg = withAlg ? #","alg":"ES256""# : ""
        let jwk = #"{"kty":"EC","crv":"P-256","use":"sig","kid":"\#(kid)","x":"\#(parameters.x)","y":"\#(parameters.y)"\#(alg)}"#
        return TestSigningKey(kid: kid, collection: collection, jwk: jwk)
    }

    /// A fresh 2048-bit RSA key made with openssl, whose JWK has no `alg`, as three signers: RS256 (the algorithm
    /// its type gives it), and PS256 and RS512 (which the broker must not let a token choose).
    static func rsa(kid: String) async throws -> (rs256: TestSigningKey, ps256: TestSigningKey, rs512: TestSigningKey) {
        let pem = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-rsa-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: pem) }
        try await ChildProcess.check("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", pem.path])
        let key = try Insecure.RSA.PrivateKey(pem: String(contentsOf: pem, encoding: .utf8))
        let primitives = try key.publicKey.getKeyPrimitives()
        let jwk = #"{"kty":"RSA","kid":"\#(kid)","n":"\#(base64URL(primitives.modulus))","e":"\#(base64URL(primitives.publicExponent))"}"#
        let rs256 = JWTKeyCollection()
        await rs256.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        let ps256 = JWTKeyCollection()
        await ps256.add(pss: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        let rs512 = JWTKeyCollection()
        await rs512.add(rsa: key, digestAlgorithm: .sha512, kid: JWKIdentifier(string: kid))
        return (
            TestSigningKey(kid: kid, collection: rs256, jwk: jwk), TestSigningKey(kid: kid, collection: ps256, jwk: jwk),
            TestSigningKey(kid: kid, collection: rs512, jwk: jwk)
        )
    }

    /// Signs `claims`; the header names this key's `kid` unless `kid` says otherwise (`.some(nil)`: no kid).
    func sign(_ claims: TokenClaims, kid: String?? = .none) async throws -> String {
        let named = kid ?? self.kid
        return try await collection.sign(claims, kid: named.map { JWKIdentifier(string: $0) })
    }
}

private func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
#endif
