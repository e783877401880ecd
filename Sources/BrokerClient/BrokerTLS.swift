import Foundation

/// Whom a `wss://` connection trusts: the system's roots (the default), or certificates the app brings (a broker
/// with a private certificate authority).
///
/// The library's own small type, so the same code works over either transport: NIOSSL (BoringSSL) on Linux,
/// Network.framework's TLS on Apple platforms, which cannot take NIOSSL's configuration.
public struct BrokerTLS: Sendable, Equatable {
    /// The DER bytes of the certificates to trust as roots, in addition to nothing else; empty: the system's roots.
    public var trustedRootsDER: [Data]

    /// Trusts the system's roots, as a browser does.
    public static let system = BrokerTLS(trustedRootsDER: [])

    /// Trusts only these roots (DER bytes each).
    public init(trustedRootsDER: [Data]) {
        self.trustedRootsDER = trustedRootsDER
    }

    /// Trusts only the certificates in `pem` (one or more `-----BEGIN CERTIFICATE-----` blocks).
    /// - Throws: ``BrokerClientError`` when the text holds no certificate.
    public init(trustedRootsPEM pem: String) throws {
        let roots = Self.derBlocks(inPEM: pem)
        guard !roots.isEmpty else { throw BrokerClientError("no certificate in the PEM text given as a trusted root") }
        self.init(trustedRootsDER: roots)
    }

    /// The base64 body of every certificate block, decoded.
    static func derBlocks(inPEM pem: String) -> [Data] {
        var blocks: [Data] = []
        var body: String?
        for line in pem.split(whereSeparator: \.isNewline) {
            let line = line.trimmingCharacters(in: .whitespaces)
            if line == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if line == "-----END CERTIFICATE-----" {
                if let text = body, let der = Data(base64Encoded: text) { blocks.append(der) }
                body = nil
            } else if body != nil {
                body? += line
            }
        }
        return blocks
    }
}
