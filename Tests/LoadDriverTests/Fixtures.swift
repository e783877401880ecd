import FleetSimulation
import Foundation

/// Shared test data.
enum Fixtures {
    /// The repository's root, found from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The shipped Buenos Aires area.
    static func buenosAires() throws -> Area {
        try Area.load(path: repository.appendingPathComponent("config/areas/buenos-aires.yaml").path)
    }
}
