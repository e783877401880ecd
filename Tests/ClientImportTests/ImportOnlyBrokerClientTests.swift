import BrokerClient
import XCTest

/// An app writes `import BrokerClient` and nothing else: this target depends on BrokerClient alone and imports it
/// alone, yet names every type the client's public API takes or gives (from BrokerProtocol and TrackingRules).
final class ImportOnlyBrokerClientTests: XCTestCase {
    func testTheTypesThePublicAPINamesNeedNoOtherImport() {
        let fix = Position(lat: -34.6, lon: -58.4, accuracy: 5, speed: 3, heading: 90, timestamp: 1_700_000_000_000)
        let target: ClientFrame.Target = .donation("d-1")
        let refused = VolunteerPublisher.FixOutcome(position: fix, result: .refused(ErrorCode.invalidPosition, message: "lat"))
        let state: DonationState = .beingTakenTo
        let destination: Destination = .institution
        let ended = WatchEnd.unsubscribed(ServerFrame.UnsubscribeReason.delivered)
        let smoother: SpeedSmoother = DonorScreen().speed
        XCTAssertEqual(target, .donation("d-1"))
        XCTAssertEqual(refused.position, fix)
        XCTAssertTrue(state.isTrackable)
        XCTAssertEqual(destination, state.destination)
        XCTAssertEqual(ended, .unsubscribed(.delivered))
        XCTAssertEqual(smoother, SpeedSmoother())
        XCTAssertEqual(DonorViewRules.staleAfterMilliseconds, DonationTracker().staleAfterMilliseconds)
    }
}
