import Foundation
import Logging
import NIOCore
import WSClient

#if canImport(Network)
import Network
import NIOTransportServices
import Security
#else
import NIOPosix
import NIOSSL
#endif

/// Where WSClient runs: Network.framework through NIOTransportServices on Apple platforms (waiting for
/// connectivity, the system's proxies and VPNs, its TLS), NIOPosix sockets with NIOSSL elsewhere. Everything above
/// this file is the same on both.
enum WebSocketTransport {
    /// The event loop the client's timers run on.
    static func timerLoop() -> any EventLoop {
        #if canImport(Network)
        NIOTSEventLoopGroup.singleton.any()
        #else
        MultiThreadedEventLoopGroup.singleton.any()
        #endif
    }

    /// Opens a WebSocket to `url` and runs `handler` on it; returns the broker's close frame, if it sent one.
    static func run(
        url: String, configuration: WebSocketClientConfiguration, tls: BrokerTLS?, logger: Logger,
        handler: @escaping WebSocketDataHandler<WebSocketClient.Context>
    ) async throws -> WebSocketCloseFrame? {
        #if canImport(Network)
        // A NIOTSEventLoopGroup is what makes WSClient pick Network.framework, for ws:// as for wss://.
        try await WebSocketClient.connect(
            url: url, configuration: configuration, transportServicesTLSOptions: transportServicesOptions(tls),
            eventLoopGroup: NIOTSEventLoopGroup.singleton, logger: logger, handler: handler)
        #else
        try await WebSocketClient.connect(
            url: url, configuration: configuration, tlsConfiguration: try sslConfiguration(tls),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger, handler: handler)
        #endif
    }

    #if canImport(Network)
    /// Network.framework's TLS options: the system's trust, or only the app's roots.
    private static func transportServicesOptions(_ tls: BrokerTLS?) -> TSTLSOptions {
        let options = NWProtocolTLS.Options()
        // `nonisolated(unsafe)`: `SecCertificate` is not marked `Sendable`, yet the verify block must capture
        // them. Safe because nothing writes them after this line: the array is a `let`, a certificate cannot be
        // changed once made, and past the `isEmpty` below the only reader is the block, which runs on
        // `verifyQueue` (serial), one call at a time.
        nonisolated(unsafe) let anchors = (tls?.trustedRootsDER ?? []).compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
        if !anchors.isEmpty {
            sec_protocol_options_set_verify_block(
                options.securityProtocolOptions,
                { _, trust, complete in
                    let reference = sec_trust_copy_ref(trust).takeRetainedValue()
                    SecTrustSetAnchorCertificates(reference, anchors as CFArray)
                    SecTrustSetAnchorCertificatesOnly(reference, true)
                    complete(SecTrustEvaluateWithError(reference, nil))
                }, verifyQueue)
        }
        return .options(options)
    }

    private static let verifyQueue = DispatchQueue(label: "broker-client.tls-verify")
    #else
    /// NIOSSL's configuration: the system's roots, or only the app's.
    private static func sslConfiguration(_ tls: BrokerTLS?) throws -> TLSConfiguration? {
        guard let tls else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if !tls.trustedRootsDER.isEmpty {
            configuration.trustRoots = .certificates(try tls.trustedRootsDER.map { try NIOSSLCertificate(bytes: Array($0), format: .der) })
        }
        return configuration
    }
    #endif
}
