import BrokerClient
import BrokerProtocol
import Foundation
import NIOCore
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket
@testable import LocationBroker

/// Control frames cannot grow the broker: a client that streams pings and never reads holds one pong at most,
/// is not read while it does not read, and pings beyond the documented rate cost it its invalid-frame budget.
final class ControlFrameFloodTests: XCTestCase {
    private static let ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// The resident memory of this process (the broker runs in it), in bytes.
    private static func residentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { throw BrokerClientError("no VmRSS in /proc/self/status") }
        return kilobytes * 1024
    }

    func testAMillionPingsFromAClientThatNeverReadsDoNotGrowTheBrokerNorSlowABystander() async throws {
        // The invalid-frame budget is set as high as it goes, so that what bounds the flood here is the pong
        // slot and the read backpressure, not the ping rate (tested below).
        let live = try await startBroker {
            $0.maxInvalidFramesPerMinute = 100_000
            $0.publishRate = 1_000
            $0.publishBurst = 1_000
        }
        try await live.put("d-1", state: .beingLookedFor)
        let volunteer = try await live.connect("vol@example.org")
        let donor = try await live.connect("donor@example.org")
        try await donor.send(.subscribe(.init(target: .donation("d-1"))))
        guard case .subscribed = try await donor.next() else { return XCTFail("donor not subscribed") }

        let flooder = try await RawWebSocket.connect(port: live.port, token: try await LiveBroker.token("flooder@example.org"))
        let before = try Self.residentBytes()
        let frame = RawWebSocket.maskedFrame(opcode: Self.ping, [UInt8](repeating: 0x61, count: 125))
        let flooding = Task { try await flooder.flood(frame, count: 1_000_000, for: .seconds(20)) }

        // While the flood runs, the volunteer publishes and the donor gets every position, in order.
        var published: [Position] = []
        for step in 0..<10 {
            published.append(try await volunteer.publishKept(position(metresFromHome: 2_000 - Double(step) * 10)))
        }
        var delivered: [Position] = []
        while delivered.count < published.count {
            if case .position(let update) = try await donor.next() { delivered.append(update.position) }
        }
        XCTAssertEqual(delivered, published)

        let sent = try await flooding.value
        let growth = try Self.residentBytes() - before
        print("flood: \(sent) pings sent, the broker's process grew by \(growth / 1024) KB")
        XCTAssertLessThan(growth, 50 * 1024 * 1024, "the broker grew by \(growth / 1024 / 1024) MB after \(sent) pings")
        XCTAssertLessThanOrEqual(live.broker.hub.largestOutboxBytes, 262_144)
        await volunteer.close()
        await donor.close()
        try await live.stop()
    }

    func testPingsAboveTheDocumentedRateCloseTheConnectionWith4009() async throws {
        let live = try await startBroker()
        let noisy = try await RawWebSocket.connect(port: live.port, token: try await LiveBroker.token("noisy@example.org"))
        _ = try await noisy.readFrame()  // welcome
        // The ping allowance, plus the invalid-frame budget (10), plus one.
        let allowed = WebSocketConnectionHandler.pingBurst + 10
        for _ in 0...allowed { try await noisy.sendFrame(opcode: Self.ping, [1]) }
        var close: (code: UInt16, reason: String)?
        var pongs = 0
        while close == nil, let frame = try await noisy.readFrame(timeout: .seconds(5)) {
            if frame.opcode == Self.pong { pongs += 1 }
            close = frame.close
        }
        XCTAssertEqual(close?.code, 4009)
        XCTAssertEqual(close?.reason, "too many pings")
        XCTAssertGreaterThanOrEqual(pongs, 1, "pings within the rate are answered")
        try await live.stop()
    }
}
