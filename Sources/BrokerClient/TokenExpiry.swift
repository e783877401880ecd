import Foundation

/// When a token runs out, read from its JWT `exp` claim without checking the signature (the broker checks it):
/// the client asks the app for a fresh token only when the one it has is about to expire, not before every attempt.
enum TokenExpiry {
    /// Whether `token` expires within `margin` of `now`; `false` for a token that is not a JWT with an `exp`
    /// (it is then renewed only when the broker refuses it).
    static func isNear(_ token: String, margin: Duration, now: Date = Date()) -> Bool {
        guard let expiry = expiry(of: token) else { return false }
        return expiry.timeIntervalSince(now) <= Double(margin.components.seconds)
    }

    /// The `exp` of a JWT, if the token is one and has it.
    static func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let exp = claims["exp"] as? NSNumber
        else { return nil }
        return Date(timeIntervalSince1970: exp.doubleValue)
    }
}
