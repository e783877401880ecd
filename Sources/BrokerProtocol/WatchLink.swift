/// The answer to `POST /v1/donations/{id}/watch-token`: a link that lets its holder watch one donation, and
/// nothing else, until it expires or the donation ends.
public struct WatchLink: Codable, Sendable, Equatable {
    /// The watch token (a JWT the broker signed). Open a WebSocket with it like any token.
    public var token: String
    /// When the token expires, in milliseconds since the Unix epoch; the donation ending kills it sooner.
    public var expiresAt: Int64
    /// The tracking page's path with the token in its fragment: `/track/{id}#token=...`. Prefix the broker's
    /// public origin (`https://broker.example.org`) before handing it to the donor.
    public var url: String

    public init(token: String, expiresAt: Int64, url: String) {
        self.token = token
        self.expiresAt = expiresAt
        self.url = url
    }
}
