import JWTKit

/// The claims of a client token that the broker reads: the registered time and audience claims, every
/// top-level string claim, so that the identity claim can be chosen by configuration (`sub`, `email`...), and
/// every top-level boolean claim (`email_verified`).
package struct TokenClaims: JWTPayload {
    var expiresAt: Int64?
    var notBefore: Int64?
    var issuer: String?
    var audiences: [String]
    var strings: [String: String]
    /// Claims that are JSON booleans; a string `"true"` is not a boolean.
    var booleans: [String: Bool]

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(
        expiresAt: Int64?, notBefore: Int64? = nil, issuer: String? = nil, audiences: [String] = [], strings: [String: String],
        booleans: [String: Bool] = [:]
    ) {
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.issuer = issuer
        self.audiences = audiences
        self.strings = strings
        self.booleans = booleans
    }

    /// The claims of a claims set read by ``JOSEObjectReader``, exactly as `init(from:)` reads them with `JSONDecoder`
    /// (the differential test JOSEReaderDifferentialTests holds the two together).
    /// - Throws: `JWTError.claimVerificationFailure` when `exp` or `nbf` is not a number of seconds.
    init(members: [String: JOSEValue]) throws {
        var strings: [String: String] = [:]
        var booleans: [String: Bool] = [:]
        for (name, value) in members {
            switch value {
            case .string(let text): strings[name] = text
            case .bool(let flag): booleans[name] = flag
            default: break
            }
        }
        self.strings = strings
        self.booleans = booleans
        self.expiresAt = try Self.seconds(members["exp"], "exp")
        self.notBefore = try Self.seconds(members["nbf"], "nbf")
        self.issuer = strings["iss"]
        switch members["aud"] {
        case .string(let single)?: self.audiences = [single]
        case .strings(let many)?: self.audiences = many
        default: self.audiences = []
        }
    }

    /// NumericDate claims are seconds, possibly fractional; a claim that is present must be such a number.
    private static func seconds(_ value: JOSEValue?, _ name: String) throws -> Int64? {
        guard let value else { return nil }
        guard case .number(let seconds?) = value, seconds.isFinite, abs(seconds) < 1e15 else {
            throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "\(name) must be a number of seconds")
        }
        return Int64(seconds.rounded(.down))
    }

    /// Decoding with `JSONDecoder` (how jwt-kit reads a payload); the broker reads client tokens with
    /// ``init(members:)``.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        var strings: [String: String] = [:]
        var booleans: [String: Bool] = [:]
        for key in container.allKeys {
            if let value = try? container.decode(String.self, forKey: key) {
                strings[key.stringValue] = value
            } else if let value = try? container.decode(Bool.self, forKey: key) {
                booleans[key.stringValue] = value
            }
        }
        self.strings = strings
        self.booleans = booleans
        self.expiresAt = try Self.seconds(container, "exp")
        self.notBefore = try Self.seconds(container, "nbf")
        self.issuer = strings["iss"]
        let audience = AnyKey(stringValue: "aud")
        if let single = try? container.decode(String.self, forKey: audience) {
            self.audiences = [single]
        } else if let many = try? container.decode([String].self, forKey: audience) {
            self.audiences = many
        } else {
            self.audiences = []
        }
    }

    /// NumericDate claims are seconds, possibly fractional.
    private static func seconds(_ container: KeyedDecodingContainer<AnyKey>, _ name: String) throws -> Int64? {
        let key = AnyKey(stringValue: name)
        guard container.contains(key) else { return nil }
        guard let value = try? container.decode(Double.self, forKey: key), value.isFinite, abs(value) < 1e15 else {
            throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "\(name) must be a number of seconds")
        }
        return Int64(value.rounded(.down))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        for (key, value) in strings { try container.encode(value, forKey: AnyKey(stringValue: key)) }
        for (key, value) in booleans { try container.encode(value, forKey: AnyKey(stringValue: key)) }
        if let expiresAt { try container.encode(expiresAt, forKey: AnyKey(stringValue: "exp")) }
        if let notBefore { try container.encode(notBefore, forKey: AnyKey(stringValue: "nbf")) }
        if audiences.count == 1 {
            try container.encode(audiences[0], forKey: AnyKey(stringValue: "aud"))
        } else if !audiences.isEmpty {
            try container.encode(audiences, forKey: AnyKey(stringValue: "aud"))
        }
    }

    /// Time claims are checked by ``TokenVerifier`` so that it can say which one failed.
    package func verify(using algorithm: some JWTAlgorithm) async throws {}
}
