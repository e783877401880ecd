import BrokerAuth
import BrokerCore
import BrokerPostgres
import Foundation
import TrackingPage

/// Everything the broker can be told, with the defaults it uses when told nothing.
///
/// Values come in layers: these defaults, then the YAML file (`--config`), then `LOCATION_BROKER_*`
/// environment variables, then command-line flags. The initial values below are the only place a default is
/// written: ``ConfigurationKey`` (every setting's key, flag, environment variable, range and help) reads them
/// back for `--help`, config/broker.yaml and docs/CONFIGURATION.md.
package struct BrokerConfiguration: Sendable {
    /// Address to listen on.
    var host = "127.0.0.1"
    /// TCP port to listen on; 0 picks a free port (tests use that).
    var port = 8080
    /// Path of the SQLite database that holds donations; created, with its folder, on first start.
    var database = "data/broker.sqlite"
    /// PostgreSQL shared by the nodes of a cluster, for donations and the messages between nodes; `nil`: the
    /// embedded SQLite `database`, one node.
    var store: PostgresLocation?
    /// A file holding the PostgreSQL password of `store`, so that it need not be in the URL.
    var storePasswordFile: String?
    /// This node's name in a cluster; unique among running nodes. Defaults to host name and process id.
    var nodeID: String?
    /// The secrets that seal what the nodes leave in PostgreSQL (NOTIFY payloads, stored last positions), the one
    /// that seals first; the others only open (rotation). Required with `store`; each at least 32 bytes.
    var clusterSecrets: [String]?
    /// Seconds between the listening session's sealed round trips; one not heard back within this long counts as
    /// a lost bus (reconnect, then catch up).
    var clusterHeartbeatSeconds = 5
    /// HS256 secret for WebSocket tokens, at least 32 bytes of UTF-8. No default: the broker refuses to start
    /// without it unless a JWKS (`jwks_url` or `jwks_file`) is given.
    package var jwtSecret: String?
    /// A JWKS file (JSON) with RS256/ES256 public keys for verifying tokens; read again when it changes or on
    /// SIGHUP. Needs `audience` and `issuer`.
    var jwksFile: String?
    /// An HTTPS URL serving a JWKS, such as Firebase's; fetched at start, kept for its `Cache-Control: max-age`
    /// and refreshed in the background. Needs `audience` and `issuer`.
    var jwksURL: URL?
    /// When the JWKS is read again (``JWKSTiming``'s documented defaults; tests shorten them).
    var jwksTiming = JWKSTiming.defaults
    /// The token claim that holds the caller's identity; Firebase ID tokens carry the e-mail in `email`.
    var identityClaim = "sub"
    /// With `identity_claim: email`, tokens must carry `email_verified: true`.
    var requireEmailVerified = true
    /// Tokens must name this audience in `aud`; required with a JWKS.
    var audience: String?
    /// Tokens must name this issuer in `iss`; required with a JWKS.
    var issuer: String?
    /// The key the Ponte backend presents on the donations API, at least 32 bytes. No default.
    var backendKey: String?
    /// Seconds a watch link (`POST /v1/donations/{id}/watch-token`) lives, unless its donation ends first.
    var watchTokenTTLSeconds = 86_400
    /// Seconds between WebSocket pings; a peer that does not answer one ping before the next is closed.
    var heartbeatSeconds = 30
    /// The cadence volunteers publish at; a volunteer silent for 3 intervals is reported offline.
    var publishIntervalSeconds = 20
    /// How many kept positions each channel holds for `since` recovery.
    var historySize = 32
    /// Metres from the destination within which an arrival event fires.
    var arrivalRadiusMeters = 150.0
    /// Positions per second a volunteer may publish, over all their connections.
    var publishRate = 1.0
    /// How many positions a volunteer may publish in a burst above the rate.
    var publishBurst = 5
    /// The largest WebSocket frame accepted from a client, in bytes; larger frames close the connection with 1009.
    package var maxFrameBytes = 4096
    /// The largest HTTP request body accepted, in bytes.
    var maxBodyBytes = 65_536
    /// Bytes a connection's outbound queue may hold before positions are conflated and, if that is not
    /// enough, the connection is closed as a slow consumer (4008).
    var outboxBytes = 262_144
    /// Seconds queued frames may wait without the writer taking any before the connection is closed as a
    /// slow consumer (4008).
    var slowConsumerSeconds = 10
    /// WebSocket connections one identity may hold open at once.
    var maxConnectionsPerIdentity = 4
    /// Refused frames an identity may be answered per minute, across all its connections (a burst of this many);
    /// past it, close 4009 and refuse its upgrades until the budget refills.
    var maxInvalidFramesPerMinute = 10
    /// Refused WebSocket upgrades (bad or missing tokens) a source address may have per minute (a burst of this
    /// many); past it, its upgrades are answered 429 before any token is read.
    var maxRefusedUpgradesPerMinute = 60
    /// Milliseconds a fix may be stamped before its donation's trackable window opened and still count as
    /// inside it, for phone clocks running behind the broker's.
    var windowToleranceMilliseconds = 2_000
    /// Seconds after which a fix is too old to be kept or delivered at all (`too-old`), even inside the window.
    var maxPositionAgeSeconds = 600
    /// Seconds a new TCP connection may take to send its first request (or upgrade) before it is closed.
    var handshakeTimeoutSeconds = 10
    /// Seconds an HTTP request's body may take to arrive after its head; past it, 408 and the socket closed. A
    /// keep-alive connection's next head must arrive whole within three times this after a response.
    var requestTimeoutSeconds = 30
    /// Subscriptions one connection may hold at once.
    var maxSubscriptionsPerConnection = 16
    /// Seconds SIGTERM waits for WebSockets to close (1001) before the broker exits anyway.
    var shutdownGraceSeconds = 10
    /// Seconds a PubNub subscribe (long poll) is held when there is nothing to answer; the SDKs wait 310 s.
    var pubNubHoldSeconds = 60
    /// Where trip events are POSTed as signed webhooks (Standard Webhooks); `nil`: no webhooks.
    var webhookURL: String?
    /// The `whsec_` secrets webhooks are signed with; each signs (a receiver accepts either during a rotation).
    /// Required with `webhookURL`.
    var webhookSecrets: [String]?
    /// Seconds one webhook request may take before it counts as failed.
    var webhookTimeoutSeconds = 10
    /// Hours a webhook is tried again, with backoff and jitter, before it is kept as failed for an operator.
    var webhookRetryHours = 24
    /// An estimated arrival within this many minutes makes `tracking.approaching`.
    var eventsApproachingMinutes = 5
    /// Seconds without a fix inside a trackable window that make `tracking.silent`.
    var eventsSilentSeconds = 120
    /// The contact push services see in VAPID (`mailto:` or `https:`); Web Push to donors is on while set.
    var pushSubject: String?
    /// The VAPID P-256 private key (PEM); `nil`: `vapid-private.pem` beside the SQLite database, made on first
    /// start. Required in a cluster, where every node must sign with the same key.
    var vapidPrivateKeyFile: String?
    /// The push services donors' subscriptions may point at (exact hosts, or `*.` and a suffix): the broker
    /// POSTs to a subscription's endpoint, so an endpoint anywhere else is refused.
    var pushServiceHosts = ["fcm.googleapis.com", "updates.push.services.mozilla.com", "*.push.apple.com", "*.notify.windows.com"]
    /// PubNub subscribes one identity may have held at once.
    var pubNubMaxPollsPerIdentity = 4
    /// PubNub subscribes held at once, in all.
    var pubNubMaxPolls = 10_000
    /// PEM certificate chain; with `tlsKey`, the broker serves https:// and wss:// only.
    var tlsCert: String?
    /// PEM private key of `tlsCert`.
    var tlsKey: String?
    /// trace, debug, info, notice, warning, error or critical.
    var logLevel = "info"
    /// `text` (swift-log's lines) or `json` (one JSON object per line, for log shippers).
    var logFormat = "text"
    /// The tracking page's street map: Leaflet's folder and the opt-in tiles.
    var map = MapSettings.defaults

    /// Where donations are kept, for logs and errors.
    var storeDescription: String { store?.description ?? database }

    /// The shortest secret or backend key the broker accepts, in bytes.
    static let minimumSecretBytes = 32
}

extension BrokerConfiguration {
    /// Every setting at its default.
    package static let defaults = BrokerConfiguration()
}
