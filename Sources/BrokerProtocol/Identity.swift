import Foundation

/// Identities (e-mail addresses, or whatever the token's identity claim holds) and donation ids.
///
/// Two identities are the same person only when their canonical forms are the same bytes. The canonical form
/// is the identity itself, in Unicode normalization form C (NFC), with the ASCII letters A-Z lower-cased and
/// every other character kept as it is: no full Unicode case folding, which would make `\u{212A}im@x.org`
/// (KELVIN SIGN) the same person as `kim@x.org`. So that no two different strings can look or compare alike
/// elsewhere (the identity provider, the backend, Swift's own `==`, which compares canonically equivalent
/// strings as equal), an identity is refused outright when
/// - it is empty or longer than 254 bytes of UTF-8;
/// - it holds whitespace, a control or format character (zero-width joiner, bidi marks...), a default-ignorable
///   (invisible) character, a private-use, surrogate, noncharacter or unassigned code point;
/// - it holds a non-ASCII character that compatibility mapping (NFKC) or case mapping turns into something
///   holding ASCII: KELVIN SIGN (`k`), fullwidth and mathematical letters, ligatures such as `ﬁ`, LONG S (`s`),
///   DOTLESS I (upper case `I`), SHARP S (upper case `SS`)...;
/// - it is not in NFC (a decomposed `é` must be sent composed), or would not be once its ASCII letters are
///   lower-cased (`H` + COMBINING MACRON BELOW is NFC, but `h` + that mark composes into U+1E96).
public enum Identity {
    /// The longest identity the broker accepts, in bytes (the longest e-mail address SMTP allows is 254).
    public static let maximumLength = 254

    /// Why an identity was refused, as a person reads it after "... is not a usable identity: ".
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Lower-cases the ASCII letters of an identity and checks its form.
    /// - Returns: the canonical identity, or `nil` when ``canonicalize(_:)`` refuses it.
    public static func canonical(_ raw: String) -> String? {
        try? canonicalize(raw).get()
    }

    /// Checks an identity against the rules above and returns its canonical form, or why it is refused.
    public static func canonicalize(_ raw: String) -> Result<String, Refusal> {
        func refuse(_ why: String) -> Result<String, Refusal> { .failure(Refusal(description: why)) }
        let length = raw.utf8.count
        guard length > 0 else { return refuse("it is empty") }
        guard length <= maximumLength else { return refuse("it is longer than \(maximumLength) bytes") }
        // The common case, every byte ASCII, needs no Unicode tables: ASCII is NFC and maps to itself.
        var ascii = true
        for byte in raw.utf8 {
            if byte >= 0x80 {
                ascii = false
            } else if byte <= 0x20 || byte == 0x7F {
                return refuse(byte == 0x20 ? "it holds a space" : "it holds the control character \(Self.name(Unicode.Scalar(byte)))")
            }
        }
        if !ascii {
            for scalar in raw.unicodeScalars where !scalar.isASCII {
                if let why = refusal(of: scalar) { return refuse(why) }
            }
            // Compared as scalars: Swift's `==` would call a decomposed string equal to its composed form.
            guard raw.unicodeScalars.elementsEqual(raw.precomposedStringWithCanonicalMapping.unicodeScalars) else {
                return refuse("it is not in Unicode normalization form C (NFC); send the composed form of each accented letter")
            }
        }
        var bytes = Array(raw.utf8)
        for index in bytes.indices where bytes[index] >= 0x41 && bytes[index] <= 0x5A { bytes[index] += 0x20 }
        let canonical = String(decoding: bytes, as: UTF8.self)
        // A capital letter and a mark that stay apart in NFC may compose once lower-cased (`H` + U+0331 is NFC,
        // `h` + U+0331 is U+1E96): the canonical form must be NFC too, or it would be refused when sent back and
        // compare equal (Swift's `==`) to a string of other bytes. Found by the donation fuzzer.
        if !ascii, !canonical.unicodeScalars.elementsEqual(canonical.precomposedStringWithCanonicalMapping.unicodeScalars) {
            return refuse("once its ASCII letters are lower-cased it is not in Unicode normalization form C (NFC): a letter and the combining mark after it would make one character")
        }
        return .success(canonical)
    }

    /// Why one non-ASCII scalar may not appear in an identity, or `nil` when it may.
    private static func refusal(of scalar: Unicode.Scalar) -> String? {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator, .spaceSeparator:
            return "it holds the invisible or control character \(name(scalar))"
        default:
            break
        }
        if properties.isWhitespace || properties.isDefaultIgnorableCodePoint || properties.isNoncharacterCodePoint {
            return "it holds the invisible or control character \(name(scalar))"
        }
        let single = String(scalar)
        let mappings = [
            single.precomposedStringWithCompatibilityMapping, properties.lowercaseMapping, properties.uppercaseMapping,
            properties.titlecaseMapping,
        ]
        if mappings.contains(where: { $0.unicodeScalars.contains(where: \.isASCII) }) {
            return "it holds \(name(scalar)), a look-alike that compatibility or case mapping turns into ASCII; write the ASCII letters instead"
        }
        return nil
    }

    /// `U+212A`: how a refusal names a character without printing an invisible or confusable one.
    private static func name(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// Donation ids, as they appear in URLs and frames.
public enum DonationID {
    /// The longest donation id the broker accepts.
    public static let maximumLength = 128

    /// Whether `id` is 1 to 128 characters of `A-Z a-z 0-9 . _ : -`.
    public static func isValid(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= maximumLength else { return false }
        return id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x3A || byte == 0x2D
        }
    }
}

extension DonationUpdate {
    /// The longest home label or institution name the broker accepts.
    public static let maximumTextLength = 200

    /// Checks the body of a backend update, field by field.
    /// - Returns: the update with identities in canonical form, or a `bad-request` error naming the field.
    public func validated() -> Result<DonationUpdate, BrokerError> {
        func bad(_ message: String) -> Result<DonationUpdate, BrokerError> { .failure(BrokerError(.badRequest, message)) }
        var update = self
        // The same canonical form as a token's identity, so that the two always compare equal.
        switch Identity.canonicalize(donor) {
        case .success(let canonical): update.donor = canonical
        case .failure(let why): return bad("donor is not a usable identity: \(why)")
        }
        if let volunteer {
            switch Identity.canonicalize(volunteer) {
            case .success(let canonical): update.volunteer = canonical
            case .failure(let why): return bad("volunteer must be null or a usable identity: \(why)")
            }
        }
        if update.volunteer == update.donor {
            return bad("a donor cannot carry their own donation: volunteer and donor are the same")
        }
        if state.requiresVolunteer && update.volunteer == nil {
            return bad("a donation in \(state.rawValue) must have a volunteer")
        }
        if let message = Self.placeError(lat: home.lat, lon: home.lon, text: home.label, field: "home", textField: "label") {
            return bad(message)
        }
        if let institution {
            if let message = Self.placeError(lat: institution.lat, lon: institution.lon, text: institution.name, field: "institution", textField: "name") {
                return bad(message)
            }
        } else if state != .created && state != .cancelled {
            return bad("a donation in \(state.rawValue) must have an institution")
        }
        return .success(update)
    }

    private static func placeError(lat: Double, lon: Double, text: String?, field: String, textField: String) -> String? {
        guard lat.isFinite, (-90...90).contains(lat) else { return "\(field).lat must be a number from -90 to 90" }
        guard lon.isFinite, (-180...180).contains(lon) else { return "\(field).lon must be a number from -180 to 180" }
        if let text, text.count > maximumTextLength { return "\(field).\(textField) must be at most \(maximumTextLength) characters" }
        return nil
    }
}
