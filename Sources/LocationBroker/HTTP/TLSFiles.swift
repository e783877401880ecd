import BrokerCore
import NIOSSL

/// Serves TLS when `tls_cert` and `tls_key` are set.
enum TLSFiles {
    /// The server's TLS configuration when the configuration names a certificate and key, else `nil` (plain TCP).
    static func serverConfiguration(_ configuration: BrokerConfiguration) throws -> TLSConfiguration? {
        guard let certificatePath = configuration.tlsCert, let keyPath = configuration.tlsKey else { return nil }
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw ConfigurationError(description: "cannot read the TLS certificate \(certificatePath): \(error)")
        }
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ConfigurationError(description: "cannot read the TLS key \(keyPath): \(error)")
        }
        guard !chain.isEmpty else { throw ConfigurationError(description: "the TLS certificate file \(certificatePath) holds no certificate") }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        return tls
    }
}
