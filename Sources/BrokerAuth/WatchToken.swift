import BrokerProtocol
import Foundation
import JWTKit

/// The claims of a watch token. Signed by the broker itself (``WatchTokenVerifier``) with a key of its own, never
/// the client-token key; `typ` and `aud` say what it is, and both the client-token and the watch-token paths
/// check them, so neither kind is ever taken for the other.
package struct WatchTokenClaims: JWTPayload, Equatable {
    /// The value of `typ` (in the claims and in the JOSE header) that marks a watch token.
    static let type = "lb-watch"
    /// The audience every watch token names.
    static let audience = "location-broker/watch"

    var typ: String
    var aud: String
    /// The donor, as a keyed digest that names them without saying who they are
    /// (``WatchTokenVerifier/donorDigest(donor:donation:incarnation:)``): a link is forwarded, previewed and shown on
    /// screens, and must not carry the donor's e-mail. The link is no identity token of theirs.
    var dnr: String
    /// The donation id.
    var don: String
    /// The donation's incarnation when the link was made.
    var inc: String
    var iat: Int64
    var exp: Int64

    /// Time and type claims are checked by ``WatchTokenVerifier`` so that it can say which one failed.
    package func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// The JOSE header `typ` of watch tokens (explicit typing, RFC 8725 section 3.11). It only chooses which
    /// verifier checks a token (``JOSEToken/isWatchLink``); each verifier checks everything again, the signature first.
    static let headerType = "lb-watch+jwt"
}
