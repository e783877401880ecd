import BrokerProtocol
import Foundation
import HTTPTypes
import XCTest

@testable import BrokerCore
@testable import BrokerTestSupport
@testable import BrokerWebSocket
@testable import LocationBroker

/// A client that guesses (donation ids, channels, tokens) is bounded by a budget of refusals that belongs to who it
/// is, not to its socket: reconnecting does not refill it. Past the budget a guess is not answered at all.
final class GuessBudgetTests: XCTestCase {
    func testAThousandReconnectAndGuessCyclesGetNoMoreAnswersThanTheBudget() async throws {
        let live = try await startBroker()  // the default budget: 10 refusals a minute per identity
        try await live.put("d-real", donor: "someone-else@example.org", volunteer: "vol@example.org", state: .beingLookedFor)
        let token = try await LiveBroker.token("mallory@example.org")
        let started = ContinuousClock.now
        var answered = 0
        var refusedUpgrades = 0
        for cycle in 0..<1_000 {
            let socket: RawWebSocket
            do {
                socket = try await RawWebSocket.connect(port: live.port, token: token)
            } catch {
                refusedUpgrades += 1
                continue
            }
            _ = try await socket.readFrame()  // welcome
            for guess in 0..<10 {
                try await socket.sendText(#"{"type":"subscribe","id":"g","donation":"d-\#(cycle)-\#(guess)"}"#)
            }
            while let frame = try await socket.readFrame(timeout: .seconds(2)), frame.opcode != 0x8 {
                if String(decoding: frame.payload, as: UTF8.self).contains(#""type":"error""#) { answered += 1 }
            }
        }
        let minutes = (ContinuousClock.now - started) / .seconds(60)
        let allowed = 10 + Int((minutes * 10).rounded(.up))
        XCTAssertLessThanOrEqual(answered, allowed, "refusals answered in \(ContinuousClock.now - started) of guessing")
        XCTAssertGreaterThanOrEqual(answered, 10, "the budget itself is answered")
        XCTAssertGreaterThan(refusedUpgrades, 900, "an identity past its budget is not let in to guess again")
        // Someone else is not affected.
        let bystander = try await live.connect("bystander@example.org")
        try await bystander.send(.subscribe(.init(id: "b", target: .donation("d-404"))))
        guard case .error(let refusal) = try await bystander.next() else { return XCTFail("the bystander's refusal was not answered") }
        XCTAssertEqual(refusal.code, .notFound)
    }

    func testRefusedUpgradesAreChargedToTheAddressBeforeAnyTokenIsRead() async throws {
        let live = try await startBroker { $0.maxRefusedUpgradesPerMinute = 5 }
        var statuses: [HTTPResponse.Status] = []
        for attempt in 0..<8 {
            let socket = try await RawSocket.connect(port: live.port)
            try await socket.send(
                "GET /v1/ws HTTP/1.1\r\nHost: broker\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer not-a-token-\(attempt)\r\n\r\n")
            let answer = try await socket.readUntilClosed(timeout: .seconds(2)).text
            statuses.append(answer.hasPrefix("HTTP/1.1 401") ? .unauthorized : answer.hasPrefix("HTTP/1.1 429") ? .tooManyRequests : .internalServerError)
            if attempt == 7 { XCTAssertTrue(answer.contains("too many refused upgrades from your address"), answer) }
        }
        XCTAssertEqual(statuses, Array(repeating: .unauthorized, count: 5) + Array(repeating: .tooManyRequests, count: 3))
    }
}
