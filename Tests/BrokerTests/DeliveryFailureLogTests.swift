import BrokerProtocol
import Foundation
import JSONLogging
import Logging
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import LocationBroker

/// A failed delivery is logged at warning with its route, event type and reason, at most once a minute per route,
/// and the log holds no secret, coordinate or e-mail.
final class DeliveryFailureLogTests: XCTestCase {
    func testAFailingReceiverIsLoggedOnceAMinuteWithRouteTypeAndReasonAndNothingPrivate() async throws {
        let receiver = try await startReceiver { _, _ in .status(503) }
        let secret = TestWebhookSecret.random()
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "location-broker") { label in JSONLogHandler(label: label) { line in lines.withLockedValue { $0.append(line) } } }
        logger.logLevel = .info
        let live = try await LiveBroker.start(logger: logger) { configuration in
            configuration.webhookURL = receiver.url + "/hooks/private-path"
            configuration.webhookSecrets = [secret.text]
            configuration.webhookTimeoutSeconds = 1
        }
        addTeardownBlock { try await live.stop() }
        // Three donations start: three events, each refused and retried (the first retry within seconds).
        for id in ["d-1", "d-2", "d-3"] { try await live.put(id, state: .beingLookedFor) }
        try await receiver.waitFor("several refused attempts", within: .seconds(30)) { $0.count >= 4 }
        try await live.stop()

        let records = try lines.withLockedValue { $0 }.map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
        }
        let failures = records.filter { $0["message"] as? String == "a delivery failed" }
        XCTAssertEqual(failures.count, 1, "one line within the minute for \(receiver.received.count) refused attempts: \(failures)")
        let metadata = failures.first?["metadata"] as? [String: Any]
        XCTAssertEqual(failures.first?["level"] as? String, "warning")
        XCTAssertEqual(metadata?["route"] as? String, "webhook")
        XCTAssertEqual(metadata?["type"] as? String, "tracking.started")
        XCTAssertEqual(metadata?["reason"] as? String, "the receiver answered 503")
        let everything = lines.withLockedValue { $0.joined(separator: "\n") }
        for secretText in [secret.text, LiveBroker.backendKey, LiveBroker.jwtSecret, "private-path", "@example.org", "-34.", "-58."] {
            XCTAssertFalse(everything.contains(secretText), "the log holds \(secretText): \(everything)")
        }
    }
}
