import BrokerClient
import BrokerProtocol
import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import BrokerTestSupport
@testable import LocationBroker

/// A donor's `DonationWatcher` as SwiftUI uses it: several consumers of one watcher, and the screen state it keeps.
final class WatcherConsumersTests: XCTestCase {
    private func fixes(_ events: [DonationEvent]) -> [Position] {
        events.compactMap { if case .position(_, let fix) = $0 { fix } else { nil } }
    }

    func testOneOfTwoConsumersCancelledLeavesTheOtherEveryEventAndTheConnection() async throws {
        try await withLiveBroker({
            $0.heartbeatSeconds = 1
            $0.publishRate = 1000
            $0.publishBurst = 1000
        }) { live in
            try await live.put("d-1", state: .beingLookedFor)
            let watcher = DonationWatcher(url: live.webSocketURL, target: .donation("d-1"), options: .init(policy: ClientFaultTests.policy)) {
                try await LiveBroker.token("donor@example.org")
            }
            let kept = NIOLockedValueBox<[DonationEvent]>([])
            let dropped = NIOLockedValueBox<[DonationEvent]>([])
            let staying = watcher.makeAsyncIterator()
            let leaving = watcher.makeAsyncIterator()
            let keeper = Task {
                var iterator = staying
                while let event = await iterator.next() { kept.withLockedValue { $0.append(event) } }
            }
            let quitter = Task {
                var iterator = leaving
                while let event = await iterator.next() { dropped.withLockedValue { $0.append(event) } }
            }
            let running = Task { try await watcher.run() }
            let volunteer = try await live.connect("vol@example.org")
            do {
                try await waitUntil("both consumers saw the subscription") {
                    kept.withLockedValue { $0.contains(.connection(.connected)) } && dropped.withLockedValue { $0.contains(.connection(.connected)) }
                }
                let first = try await volunteer.publishKept(position(metresFromHome: 1_500))
                try await waitUntil("both consumers saw the first position") {
                    fixes(kept.withLockedValue { $0 }).contains(first) && fixes(dropped.withLockedValue { $0 }).contains(first)
                }
                // The SwiftUI view that ran one of them went away.
                quitter.cancel()
                await quitter.value
                var published = [first]
                for step in 1...5 { published.append(try await volunteer.publishKept(position(metresFromHome: 1_500 - Double(step) * 100))) }
                try await waitUntil("the other consumer saw every position") { fixes(kept.withLockedValue { $0 }) == published }
                XCTAssertFalse(kept.withLockedValue { $0 }.contains { if case .connection(.reconnecting) = $0 { true } else { false } }, "the connection stayed")
                XCTAssertEqual(watcher.screen().phase, .live)
                XCTAssertEqual(watcher.screen().position?.timestamp, kept.withLockedValue { $0 }.last.flatMap { if case .position(_, let p) = $0 { p.timestamp } else { nil } })
                do {
                    try await watcher.run()
                    XCTFail("a second run() was accepted")
                } catch let error as BrokerClientError {
                    XCTAssertEqual(error.kind, .alreadyRunning)
                }
            } catch {
                XCTFail("\(error); events: \(kept.withLockedValue { $0 })")
            }
            running.cancel()
            _ = try await running.value(waitingFor: "the watcher ended once cancelled")
            try await keeper.value(waitingFor: "the remaining consumer's events ended")
            await volunteer.close()
        }
    }

    /// Needs a broker that answers a donor's subscribe during a pause with `subscribed` (`tracking: false`); on an
    /// older broker (which answers `not-trackable`) it is skipped.
    func testAWatcherStartedDuringAPauseShowsPausedThenFollowsTheResume() async throws {
        try await withLiveBroker({ $0.heartbeatSeconds = 1 }) { live in
            try await live.put("d-1", state: .pickedByVolunteer)
            let probe = try await live.connect("donor@example.org")
            try await probe.send(.subscribe(.init(id: "probe", target: .donation("d-1"))))
            let answer = try await probe.next()
            await probe.close()
            if case .error(let error) = answer, error.code == .notTrackable {
                throw XCTSkip("this broker refuses a subscribe during a pause (not-trackable): the test needs paused subscriptions")
            }
            guard case .subscribed(let paused) = answer else { return XCTFail("unexpected answer: \(answer)") }
            XCTAssertFalse(paused.tracking)
            XCTAssertNil(paused.online, "presence is not told while paused")

            let watcher = DonationWatcher(url: live.webSocketURL, target: .donation("d-1"), options: .init(policy: ClientFaultTests.policy)) {
                try await LiveBroker.token("donor@example.org")
            }
            let running = Task { try await watcher.run() }
            let volunteer = try await live.connect("vol@example.org")
            do {
                try await waitUntil("the screen shows the pause") { watcher.screen().phase == .paused }
                try await live.put("d-1", state: .beingTakenTo)
                try await waitUntil("the screen waits for the volunteer's location") { watcher.screen().phase == .waiting }
                let fix = try await volunteer.publishKept(position(metresFromHome: 300))
                try await waitUntil("the screen is live") { watcher.screen().phase == .live }
                XCTAssertNotNil(watcher.screen().distance)
                XCTAssertEqual(watcher.screen().position?.timestamp, fix.timestamp)
            } catch {
                XCTFail("\(error); screen: \(watcher.screen())")
            }
            running.cancel()
            _ = try await running.value(waitingFor: "the watcher ended once cancelled")
            await volunteer.close()
        }
    }
}

/// The donor's phone loses its network now and then: no attempts while it is away, and a position published during
/// the cut reaches the screen soon after the network comes back.
final class WatcherNetworkTests: XCTestCase {
    /// What a test through the proxy gets: the broker, the proxy, the watcher, what it yielded, the volunteer
    /// connected directly, and the token calls.
    private struct Setup {
        let live: LiveBroker
        let proxy: FaultProxy
        let watcher: DonationWatcher
        let recorder: ClientFaultTests.Recorder
        let volunteer: BrokerConnection
        let tokenCalls: TokenCounter
    }

    /// A broker with d-1 trackable, a watcher of it through a fault proxy and a volunteer connected directly;
    /// `body` runs once the watcher is connected, and everything is stopped after it, whatever happened.
    private func withWatcherThroughProxy(
        heartbeatSeconds: Int = 1, policy: ConnectionStateMachine.Policy = ClientFaultTests.policy, _ body: (Setup) async throws -> Void
    ) async throws {
        let live = try await startClientBroker(heartbeatSeconds: heartbeatSeconds)
        try await live.put("d-1", state: .beingLookedFor)
        let proxy = try await FaultProxy.start(target: live.port)
        addTeardownBlock { await proxy.stop() }
        let tokenCalls = TokenCounter()
        let watcher = DonationWatcher(url: proxy.webSocketURL, target: .donation("d-1"), options: .init(policy: policy)) {
            tokenCalls.count()
            return try await LiveBroker.token("donor@example.org")
        }
        let recorder = ClientFaultTests.Recorder()
        let events = watcher.makeAsyncIterator()
        let reader = Task {
            var iterator = events
            while let event = await iterator.next() { recorder.append(event) }
        }
        let running = Task { try await watcher.run() }
        let volunteer = try await live.connect("vol@example.org")
        do {
            try await recorder.wait(for: "connected") { $0 == .connection(.connected) }
            try await body(Setup(live: live, proxy: proxy, watcher: watcher, recorder: recorder, volunteer: volunteer, tokenCalls: tokenCalls))
        } catch {
            XCTFail("\(error); events: \(recorder.all)")
        }
        running.cancel()
        _ = try await running.value(waitingFor: "the watcher ended once cancelled")
        try await reader.value(waitingFor: "the watcher's events ended")
        await volunteer.close()
        await proxy.stop()
        try await live.stop()
    }

    func testAPositionPublishedDuringACutReachesTheDonorWithinASecondOfTheNetworksReturn() async throws {
        try await withWatcherThroughProxy { setup in
            let (proxy, watcher, recorder) = (setup.proxy, setup.watcher, setup.recorder)
            let acceptedBefore = proxy.accepted
            var returns: [Duration] = []
            for cycle in 0..<3 {
                watcher.networkLost()
                proxy.refuse(for: .milliseconds(1900))
                await proxy.reset()
                try await waitUntil("the screen says there is no network", deadline: .now + .seconds(2)) { watcher.screen().link == .noNetwork }
                let offline = proxy.accepted
                let fix = try await setup.volunteer.publishKept(position(metresFromHome: 1_000 - Double(cycle) * 100))
                try await Task.sleep(for: .milliseconds(2_000 + Int64.random(in: 0..<250)))
                XCTAssertEqual(proxy.accepted, offline, "no attempt while offline (cycle \(cycle))")
                watcher.networkAvailable()
                let took = try await recorder.wait(for: "the position published during the cut (cycle \(cycle))", within: .seconds(5)) {
                    if case .position(_, fix) = $0 { true } else { false }
                }
                returns.append(took)
            }
            let attempts = proxy.accepted - acceptedBefore
            let tokenCalls = setup.tokenCalls.value
            print("WatcherNetworkTests: 3 cuts of 2 s: \(attempts) attempts, \(tokenCalls) token calls; position shown after the return in \(returns)")
            XCTAssertLessThanOrEqual(attempts, 4)
            XCTAssertEqual(tokenCalls, 1)
            for took in returns { XCTAssertLessThan(took, .milliseconds(1500), "within a second plus the round trip") }
            XCTAssertEqual(recorder.positions, recorder.positions.sorted())
        }
    }

    /// The app comes to the foreground on a path that went silent: the connection is replaced at once, long before
    /// the keepalive (heartbeat 5 s: two periods, 10 s) would have noticed; on a path that is not silent, nothing
    /// happens.
    func testComingToTheForegroundReplacesASilentConnectionAtOnce() async throws {
        var policy = ClientFaultTests.policy
        policy.silenceBeforeReplacing = .milliseconds(500)
        try await withWatcherThroughProxy(heartbeatSeconds: 5, policy: policy) { setup in
            let (watcher, recorder) = (setup.watcher, setup.recorder)
            let first = try await setup.volunteer.publishKept(position(metresFromHome: 1_200))
            try await recorder.wait(for: "the first position") { if case .position(_, first) = $0 { true } else { false } }
            // Not silent (a position just came): the foreground changes nothing.
            watcher.appEnteredForeground()
            try await Task.sleep(for: .milliseconds(300))
            XCTAssertFalse(recorder.all.contains { if case .connection(.reconnecting) = $0 { true } else { false } }, "a live connection was kept")

            setup.proxy.silence()
            let second = try await setup.volunteer.publishKept(position(metresFromHome: 1_100))
            try await Task.sleep(for: .seconds(1))
            watcher.appEnteredForeground()
            let took = try await recorder.wait(for: "the position published on the silent path", within: .seconds(5)) {
                if case .position(_, second) = $0 { true } else { false }
            }
            print("WatcherNetworkTests: foreground on a silent path: the position shown \(took) later")
            XCTAssertLessThan(took, .seconds(2), "replaced at once, not after two 5 s heartbeats")
            let firstSeq = recorder.all.lazy.compactMap { if case .position(let seq, first) = $0 { seq } else { nil } }.first
            XCTAssertTrue(recorder.all.contains(.connection(.reconnected(since: try XCTUnwrap(firstSeq)))))
        }
    }

    func testTheObservableModelFollowsTheWatcher() async throws {
        try await withLiveBroker({ $0.heartbeatSeconds = 1 }) { live in
            try await live.put("d-1", state: .beingLookedFor)
            let watcher = DonationWatcher(url: live.webSocketURL, target: .donation("d-1"), options: .init(policy: ClientFaultTests.policy)) {
                try await LiveBroker.token("donor@example.org")
            }
            let model = await MainActor.run { DonorScreenModel(watcher: watcher, clockTick: .milliseconds(100)) }
            let screen = { await MainActor.run { model.screen } }
            let initial = await screen()
            XCTAssertEqual(initial.phase, .connecting)
            let following = Task { await model.follow() }
            let running = Task { try await watcher.run() }
            let volunteer = try await live.connect("vol@example.org")
            do {
                try await waitUntil("the model waits for a position") { await screen().phase == .waiting }
                _ = try await volunteer.publishKept(position(metresFromHome: 700))
                try await waitUntil("the model is live") { await screen().phase == .live }
                let live = await screen()
                XCTAssertEqual(live.distance ?? 0, 700, accuracy: 1)
            } catch {
                XCTFail("\(error); screen: \(await screen())")
            }
            following.cancel()
            await following.value
            running.cancel()
            _ = try await running.value(waitingFor: "the watcher ended once cancelled")
            await volunteer.close()
        }
    }
}

/// Counts the token provider's calls.
final class TokenCounter: Sendable {
    private let calls = NIOLockedValueBox(0)

    func count() { calls.withLockedValue { $0 += 1 } }

    var value: Int { calls.withLockedValue { $0 } }
}
