/// Identities (e-mail addresses, or whatever the token's identity claim holds) and donation ids.
public enum Identity {
    /// The longest identity the broker accepts, in bytes (the longest e-mail address SMTP allows is 254).
    public static let maximumLength = 254

    /// Lower-cases an identity and checks its form.
    /// - Returns: the canonical identity, or `nil` when it is empty, too long, or holds spaces or control characters.
    public static func canonical(_ raw: String) -> String? {
        let lowered = raw.lowercased()
        guard !lowered.isEmpty, lowered.utf8.count <= maximumLength else { return nil }
        for scalar in lowered.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
                || scalar.properties.generalCategory == .format
            {
                return nil
            }
        }
        return lowered
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
        guard let donor = Identity.canonical(donor) else {
            return bad("donor must be an identity (e-mail) of 1 to 254 characters without spaces")
        }
        update.donor = donor
        if let volunteer {
            guard let canonical = Identity.canonical(volunteer) else {
                return bad("volunteer must be null or an identity (e-mail) of 1 to 254 characters without spaces")
            }
            update.volunteer = canonical
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
