import BrokerCore
import NIOSSL

/// Serves TLS when `tls_cert` and `tls_key` are set.
package enum TLSFiles {
    /// The server's TLS configuration when both a certificate file and a key file are named, else `nil` (plain TCP).
    /// - Parameters:
    ///   - certificatePath: the PEM certificate chain (`tls_cert`).
    ///   - keyPath: its PEM private key (`tls_key`).
    package static func serverConfiguration(certificate certificatePath: String?, key keyPath: String?) throws -> TLSConfiguration? {
        guard let certificatePath, let keyPath else { return nil }
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
