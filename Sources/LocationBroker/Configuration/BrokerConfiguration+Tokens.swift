import BrokerAuth

extension TokenVerifier {
    /// The verifier of the tokens `configuration` accepts.
    /// - Parameter keys: the JWKS in force, from the ``JWKSRefresher``; `nil` when tokens are HS256 only.
    package init(configuration: BrokerConfiguration, keys: KeyRing? = nil) async throws {
        try await self.init(
            rules: .init(
                secret: configuration.jwtSecret, identityClaim: configuration.identityClaim,
                requireEmailVerified: configuration.requireEmailVerified, audience: configuration.audience, issuer: configuration.issuer),
            keys: keys)
    }
}

extension JWKSSource {
    /// The source a configuration names, if any.
    init?(_ configuration: BrokerConfiguration) {
        if let url = configuration.jwksURL {
            self = .url(url)
        } else if let path = configuration.jwksFile {
            self = .file(path)
        } else {
            return nil
        }
    }
}
