import Foundation
import XCTest

/// What the settings tests share: two valid secrets, and YAML files removed when the test ends.
enum SettingsFixture {
    static let jwtSecret = "j-0123456789-0123456789-0123456789"
    static let backendKey = "b-0123456789-0123456789-0123456789"
    /// The environment the broker needs to start, and nothing else.
    static let secrets = ["LOCATION_BROKER_JWT_SECRET": jwtSecret, "LOCATION_BROKER_BACKEND_KEY": backendKey]
}

extension XCTestCase {
    /// A YAML configuration file holding `text`, removed when the test ends.
    func settingsFile(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString).yaml")
        try Data(text.utf8).write(to: url)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }
}
