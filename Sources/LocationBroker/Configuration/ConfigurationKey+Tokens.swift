import Foundation

// How client tokens are verified, and the backend's key.
extension ConfigurationKey {
    static let tokens: [ConfigurationKey] = [
        secret(
            "jwt_secret", \.jwtSecret, allowed: "text of at least 32 bytes (UTF-8)",
            "HS256 secret for client tokens, 32 bytes or more; required unless jwks_url or jwks_file is set."),
        parsed(
            "jwks_url", \.jwksURL, allowed: "an `https://` URL (`http://` only for `127.0.0.1`, `::1` or `localhost`)",
            example: "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com",
            "HTTPS URL of a JWKS (RS256/ES256 keys, for example Firebase's), refreshed in the background.",
            show: \.absoluteString, parse: jwksURL),
        text(
            "jwks_file", \.jwksFile, allowed: "path of a readable JWKS (JSON) file", example: "config/firebase-jwks.json",
            "JWKS file with RS256/ES256 public keys for client tokens, read again when it changes or on SIGHUP."),
        text("identity_claim", \.identityClaim, "Token claim holding the identity (Firebase: email)."),
        boolean("require_email_verified", \.requireEmailVerified, "With identity_claim email, tokens must carry email_verified: true."),
        text(
            "audience", \.audience, example: "my-firebase-project",
            "Tokens must carry this aud; required with jwks_url or jwks_file (Firebase: the project id)."),
        text(
            "issuer", \.issuer, example: "https://securetoken.google.com/my-firebase-project",
            "Tokens must carry this iss; required with jwks_url or jwks_file (Firebase: https://securetoken.google.com/<project id>)."),
        secret(
            "backend_key", \.backendKey, allowed: "text of at least 32 bytes, different from `jwt_secret`",
            "Bearer key of the donations API, 32 bytes or more. Required."),
        integer(
            "watch_token_ttl_seconds", \.watchTokenTTLSeconds, 60...2_592_000,
            "Seconds a donor's watch link lives unless its donation ends first."),
    ]

    /// Keys fetched in clear could be swapped by anyone on the path: plain HTTP only on this machine.
    private static func jwksURL(_ text: String) -> Result<URL, Refusal> {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            return .failure("must be an https:// URL, not '\(text)'")
        }
        guard scheme == "https" || (scheme == "http" && ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased())) else {
            return .failure("must be an https:// URL (http:// only for 127.0.0.1, ::1 or localhost), not '\(text)'")
        }
        return .success(url)
    }
}
