/// Why a webhook secret's text was refused, said so that the person editing `webhook_secrets` can fix it. The text
/// never repeats the secret.
package indirect enum WebhookSecretError: Error, Equatable, CustomStringConvertible {
    /// Nothing was given (an empty setting, or an empty item between two commas).
    case empty
    /// The text does not start with `whsec_`.
    case missingPrefix
    /// What follows `whsec_` is not base64.
    case notBase64
    /// The key has fewer than 24 bytes.
    case tooShort(Int)
    /// The key has more than 64 bytes.
    case tooLong(Int)
    /// No secret at all where at least one is needed to sign.
    case noSecret
    /// The `position`th item (from 1) of a comma-separated list was refused.
    case inList(position: Int, WebhookSecretError)

    package var description: String {
        switch self {
        case .empty:
            "a webhook secret is empty: write whsec_ followed by the secret's base64"
        case .missingPrefix:
            "a webhook secret must start with whsec_ (the Standard Webhooks format); generate one with 'whsec_' + base64 of 32 random bytes"
        case .notBase64:
            "a webhook secret's text after whsec_ is not base64 (letters, digits, + and /, optionally = at the end)"
        case .tooShort(let count):
            "a webhook secret has \(count) bytes; Standard Webhooks asks for at least \(WebhookSecret.minimumByteCount)"
        case .tooLong(let count):
            "a webhook secret has \(count) bytes; Standard Webhooks allows at most \(WebhookSecret.maximumByteCount)"
        case .noSecret:
            "no webhook secret: webhooks need at least one whsec_ secret to sign with"
        case .inList(let position, let error):
            "webhook secret \(position) of the list: \(error)"
        }
    }
}
