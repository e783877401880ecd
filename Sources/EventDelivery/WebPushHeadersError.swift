/// Why push headers were refused.
package enum WebPushHeadersError: Error, Equatable, CustomStringConvertible {
    /// The TTL is negative.
    case negativeTTL
    /// The urgency is not one RFC 8030 defines.
    case unknownUrgency(String)
    /// The topic is empty, longer than 32 characters, or not of the base64url alphabet.
    case badTopic

    package var description: String {
        switch self {
        case .negativeTTL: "a push's TTL must be 0 or more seconds"
        case .unknownUrgency(let urgency): "a push's urgency must be very-low, low, normal or high, not '\(urgency)'"
        case .badTopic: "a push's topic must be 1 to 32 characters of the base64url alphabet (letters, digits, - and _)"
        }
    }
}
