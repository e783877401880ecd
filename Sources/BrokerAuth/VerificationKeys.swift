import BrokerCore
import Foundation
import JWTKit
import Logging

/// One public key of a key set, ready to check signatures without awaiting anything.
package struct VerificationKey: Sendable {
    /// `RS256` or `ES256`: the only algorithm this key checks, fixed when the key set is read.
    let algorithm: String
    let checker: any JWTAlgorithm
}

/// An immutable snapshot of a JWKS: the usable keys by `kid`. The refresher builds a new one and swaps it in
/// (``KeyRing``); a handshake reads the current one and checks the signature with it, without an actor hop.
package struct VerificationKeys: Sendable {
    /// The algorithms accepted from a key set. HS256 is accepted only with `jwt_secret`, never from a JWKS.
    static let acceptedAlgorithms: Set<String> = ["RS256", "ES256"]

    let keys: [String: VerificationKey]

    /// The key a token names. A token without `kid` is checked only when the set holds exactly one key: with
    /// several, choosing one would be a guess.
    func key(for kid: String?) -> VerificationKey? {
        guard let kid else { return keys.count == 1 ? keys.values.first : nil }
        return keys[kid]
    }

    /// The fields of a JWK that decide whether and how it is used.
    private struct KeyFields: Decodable {
        let kty: String?
        let alg: String?
        let kid: String?
        let crv: String?
        let use: String?
        let d: String?
    }

    private struct KeySet: Decodable {
        let keys: [Entry]
    }

    /// One key of the set: its fields, and the JWK when jwt-kit can read it.
    private struct Entry: Decodable {
        let fields: KeyFields?
        let jwk: JWK?

        init(from decoder: any Decoder) throws {
            fields = try? KeyFields(from: decoder)
            jwk = try? JWK(from: decoder)
        }
    }

    /// Reads a JWKS document. Keys that cannot be used are skipped, each with a log line saying why; a set with
    /// no usable key is an error.
    /// - Parameter source: the file or URL, for messages.
    static func read(_ data: Data, source: String, logger: Logger) async throws -> VerificationKeys {
        let set: KeySet
        do {
            set = try JSONDecoder().decode(KeySet.self, from: data)
        } catch {
            throw ConfigurationError(description: "the JWKS from \(source) is not a JSON object with a \"keys\" array")
        }
        var keys: [String: VerificationKey] = [:]
        var skipped: [String] = []
        for (index, entry) in set.keys.enumerated() {
            switch await key(entry) {
            case .success(let (kid, key)):
                if keys[kid] != nil {
                    skipped.append("key \(index) (kid \(kid)): another key has the same kid")
                } else {
                    keys[kid] = key
                }
            case .failure(let why):
                skipped.append("key \(index)\(entry.fields?.kid.map { " (kid \($0))" } ?? ""): \(why.description)")
            }
        }
        for reason in skipped {
            logger.warning("JWKS key skipped", metadata: ["source": "\(source)", "reason": "\(reason)"])
        }
        guard !keys.isEmpty else {
            throw ConfigurationError(
                description: "the JWKS from \(source) holds no usable key (RS256 or ES256 on P-256, each with a kid)"
                    + (skipped.isEmpty ? "" : ": " + skipped.joined(separator: "; ")))
        }
        return VerificationKeys(keys: keys)
    }

    private struct Skip: Error, CustomStringConvertible {
        let description: String
    }

    /// The algorithm of a key: its `alg` when it has one, else the one its type allows (RSA: RS256, EC on P-256:
    /// ES256), never the one a token asks for.
    private static func key(_ entry: Entry) async -> Result<(String, VerificationKey), Skip> {
        func skip(_ why: String) -> Result<(String, VerificationKey), Skip> { .failure(Skip(description: why)) }
        guard let fields = entry.fields else { return skip("not a JSON object of text fields") }
        guard let kid = fields.kid, !kid.isEmpty else { return skip("no kid, so no token could name it") }
        if let use = fields.use, use != "sig" { return skip("use is \(use), not sig") }
        guard fields.d == nil else { return skip("it holds a private key; a JWKS must hold public keys only") }
        let algorithm: String
        switch (fields.alg, fields.kty, fields.crv) {
        case ("RS256"?, "RSA"?, _), (nil, "RSA"?, _): algorithm = "RS256"
        case ("ES256"?, "EC"?, "P-256"?), (nil, "EC"?, "P-256"?): algorithm = "ES256"
        case (let alg?, _, _) where !acceptedAlgorithms.contains(alg): return skip("alg \(alg) is not accepted (RS256 or ES256)")
        default:
            return skip("kty \(fields.kty ?? "none")\(fields.crv.map { " on \($0)" } ?? "") does not fit alg \(fields.alg ?? "RS256 or ES256")")
        }
        guard var jwk = entry.jwk else { return skip("its key material cannot be read") }
        jwk.algorithm = JWK.Algorithm(rawValue: algorithm)
        do {
            let collection = JWTKeyCollection()
            try await collection.add(jwk: jwk)
            let checker = try await collection.getKey(for: JWKIdentifier(string: kid))
            guard checker.name == algorithm else { return skip("jwt-kit made a \(checker.name) key of it") }
            return .success((kid, VerificationKey(algorithm: algorithm, checker: checker)))
        } catch {
            return skip("its key material cannot be read")
        }
    }
}
