import BrokerProtocol

/// The broker's release: the one definition of its version, which `--version` prints, the schema records, and
/// scripts/package-deb reads (keep the `version = "..."` line as it is).
package enum BrokerRelease {
    /// This release, as CHANGELOG.md names it (semantic versioning).
    package static let version = "1.0.0"

    /// What `location-broker --version` prints.
    package static var description: String {
        "location-broker \(version) (protocol \(ProtocolVersion.current))"
    }
}
