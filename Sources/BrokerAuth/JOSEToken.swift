import Foundation

/// A token as an upgrade request carries it: split into its three base64url parts and its JOSE header read once
/// (``JOSEObjectReader``), both to tell a watch link from a client token and to verify it, so that no upgrade
/// decodes its header twice.
package struct JOSEToken: Sendable {
    /// The token as received.
    let text: String
    /// The three parts decoded, when the token is three strict base64url parts (RFC 7515 compact serialization).
    let parts: Parts?
    /// The JOSE header's members, or why they were refused; `nil` when ``parts`` is `nil` or the token is too long
    /// to be verified.
    let header: Result<[String: JOSEValue], JOSEObjectError>?
    /// Whether the header says the token is a watch link (`typ` is ``WatchTokenClaims/headerType``). It only chooses
    /// the verifier: each one checks the token completely, the signature first.
    package let isWatchLink: Bool

    /// The decoded parts of a compact JWS.
    struct Parts: Sendable {
        let header: Data
        let payload: Data
        let signature: Data
        /// The length in bytes of the signing input (`header.payload`, as received) at the start of the token.
        let signingInputLength: Int
    }

    /// Splits and reads `token`; decodes nothing of a token longer than `maximumBytes` (the verifiers refuse it
    /// by its length).
    package init(_ token: String, maximumBytes: Int = TokenVerifier.maximumTokenBytes) {
        text = token
        // Split over the contiguous UTF-8 bytes: stepping through a `String.UTF8View` byte by byte cost more than
        // decoding the parts.
        var bytes = token
        let read = bytes.withUTF8 { utf8 -> (Parts?, Result<[String: JOSEValue], JOSEObjectError>?, Bool) in
            let firstDot = utf8.firstIndex(of: UInt8(ascii: "."))
            guard !utf8.isEmpty, utf8.count <= maximumBytes else {
                return (nil, nil, firstDot.map { Self.routesAsWatchLink(utf8[..<$0], strictHeader: nil) } ?? false)
            }
            var parts: Parts?
            if let firstDot, let secondDot = utf8[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
                !utf8[(secondDot + 1)...].contains(UInt8(ascii: ".")),
                let header = Base64URL.decode(utf8[..<firstDot]),
                let payload = Base64URL.decode(utf8[(firstDot + 1)..<secondDot]),
                let signature = Base64URL.decode(utf8[(secondDot + 1)...])
            {
                parts = Parts(header: header, payload: payload, signature: signature, signingInputLength: secondDot)
            }
            let header = parts.map { JOSEObjectReader.read($0.header) }
            return (parts, header, firstDot.map { Self.routesAsWatchLink(utf8[..<$0], strictHeader: header) } ?? false)
        }
        (parts, header, isWatchLink) = read
    }

    /// Calls `body` with the signing input (`header.payload` as received), without copying it.
    func withSigningInput<T>(_ parts: Parts, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        var bytes = text
        return try bytes.withUTF8 { try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0[..<parts.signingInputLength]))) }
    }

    /// The routing rule the broker has always had: the first part, if at most 1,024 bytes and
    /// base64 (strict or not), is a JSON object whose `typ` is the watch-link type. The strict header already read
    /// is used when there is one; the lenient decoding only happens for tokens that are not well-formed anyway.
    private static func routesAsWatchLink(_ first: Slice<UnsafeBufferPointer<UInt8>>, strictHeader: Result<[String: JOSEValue], JOSEObjectError>?) -> Bool {
        guard first.count <= 1024 else { return false }
        let members: Result<[String: JOSEValue], JOSEObjectError>
        if let strictHeader {
            members = strictHeader
        } else if let data = Base64URL.decode(first, strict: false) {
            members = JOSEObjectReader.read(data)
        } else {
            return false
        }
        guard case .success(let header) = members else { return false }
        return header["typ"] == .string(WatchTokenClaims.headerType)
    }
}
