import BrokerStorage
import Crypto
import Foundation

/// The keys that seal what the nodes of a cluster leave in PostgreSQL: every NOTIFY payload and every stored
/// last position. Anyone who can connect to the database can LISTEN and NOTIFY, and its administrator can read
/// every table, so neither may learn a position or an identity from them, nor make a node believe anything.
///
/// Each `cluster_secret` is stretched with HKDF-SHA256 into one key per ``Purpose``, so a payload sealed for one
/// purpose never opens as another; what it is bound to (the NOTIFY channel, the stored row's key) is the
/// associated data of the seal, so it cannot be moved either. Sealing uses ChaCha20-Poly1305 with a random nonce.
///
/// Rotation: the first secret seals, every secret opens. Add the new secret second on every node, then move it
/// first on every node, then remove the old one (docs/SCALING.md).
struct ClusterKeys: Sendable {
    /// What a sealed payload is for; each has its own derived key.
    enum Purpose: String, Sendable, CaseIterable {
        /// Positions, presence and donation changes on the bus.
        case busEvent = "location-broker bus event v1"
        /// The listening session's round trip.
        case heartbeat = "location-broker heartbeat v1"
        /// Positions kept in `lb_last_positions`.
        case lastPosition = "location-broker last position v1"
        /// The keyed hash that stands for a volunteer channel in `lb_last_positions`.
        case channelKey = "location-broker channel key v1"
        /// The keyed hash that picks a volunteer's bus shard (``ClusterShards``).
        case shard = "location-broker bus shard v1"
    }

    private struct Generation: Sendable {
        let keys: [Purpose: SymmetricKey]
    }

    /// Newest first: index 0 seals.
    private let generations: [Generation]

    /// The text that starts every sealed payload: a version, so a later format can be told apart.
    static let prefix = "s1."

    /// - Parameter secrets: the `cluster_secret` values, the one that seals first; at least one.
    init(secrets: [String]) {
        precondition(!secrets.isEmpty, "ClusterKeys needs at least one secret")
        generations = secrets.map { secret in
            let material = SymmetricKey(data: Data(secret.utf8))
            var keys: [Purpose: SymmetricKey] = [:]
            for purpose in Purpose.allCases {
                keys[purpose] = HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: material, salt: Data("location-broker cluster".utf8), info: Data(purpose.rawValue.utf8),
                    outputByteCount: 32)
            }
            return Generation(keys: keys)
        }
    }

    /// Seals `plaintext` for `purpose`, bound to `context` (a NOTIFY channel, a row's key): text safe for a NOTIFY
    /// payload or a text column.
    func seal(_ plaintext: Data, for purpose: Purpose, context: String) throws -> String {
        let key = generations[0].keys[purpose]!
        let box = try ChaChaPoly.seal(plaintext, using: key, authenticating: Self.associatedData(purpose, context))
        return Self.prefix + box.combined.base64EncodedString()
    }

    /// Opens what ``seal(_:for:context:)`` made with any of the secrets, for the same purpose and context.
    /// - Throws: ``ClusterSealError`` when it was not sealed by a holder of a cluster secret for this purpose
    ///   and context (forged, altered, moved or replayed onto another purpose).
    func open(_ sealed: String, for purpose: Purpose, context: String) throws -> Data {
        guard sealed.hasPrefix(Self.prefix), let combined = Data(base64Encoded: String(sealed.dropFirst(Self.prefix.count))),
            let box = try? ChaChaPoly.SealedBox(combined: combined)
        else { throw ClusterSealError() }
        let associated = Self.associatedData(purpose, context)
        for generation in generations {
            if let opened = try? ChaChaPoly.open(box, using: generation.keys[purpose]!, authenticating: associated) { return opened }
        }
        throw ClusterSealError()
    }

    /// The keyed hash of a volunteer channel under the sealing secret: what `lb_last_positions` is keyed by, so the
    /// table never holds an identity and nobody without the secret can test a guess.
    func channelKey(_ channel: String) -> String { channelKeys(channel)[0] }

    /// The channel's keyed hash under every secret, the sealing one first (rows written before a rotation).
    func channelKeys(_ channel: String) -> [String] {
        generations.map { generation in
            let code = HMAC<SHA256>.authenticationCode(for: Data(channel.utf8), using: generation.keys[.channelKey]!)
            return Data(code).lowercaseHex
        }
    }

    /// The bus shards of a volunteer channel, one per secret, the sealing one first, without repeats: a keyed
    /// hash, stable across processes and versions, that nobody without the secret can compute, so the channel a
    /// volunteer's positions travel on says nothing about who they are.
    func shards(of channel: String) -> [Int] {
        var shards: [Int] = []
        for generation in generations {
            let code = Data(HMAC<SHA256>.authenticationCode(for: Data(channel.utf8), using: generation.keys[.shard]!))
            let value = code.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let shard = Int(value % UInt64(ClusterShards.count))
            if !shards.contains(shard) { shards.append(shard) }
        }
        return shards
    }

    private static func associatedData(_ purpose: Purpose, _ context: String) -> Data {
        Data("\(purpose.rawValue)\n\(context)".utf8)
    }
}

/// A sealed payload that does not open: not made by a holder of the cluster secret for this purpose and place.
struct ClusterSealError: Error, CustomStringConvertible {
    var description: String { "a payload that does not open with the cluster secret (forged, altered, or moved from another purpose)" }
}

// Its keys stay out of every way it is printed: `"\(value)"`, `String(reflecting:)`, `dump`, or a log's metadata.
extension ClusterKeys: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "ClusterKeys(***)" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
