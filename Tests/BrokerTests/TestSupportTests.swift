import BrokerCore
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

@testable import BrokerTestSupport
@testable import LocationBroker

/// The test support keeps its promises: what a test starts is stopped when it fails, and a wait that would
/// never end fails, naming what it waited for.
final class TestSupportTests: XCTestCase {
    private struct Deliberate: Error {}

    func testABrokerScopeStopsTheBrokerWhenTheBodyThrows() async throws {
        var port = 0
        do {
            try await withLiveBroker { live in
                port = live.port
                throw Deliberate()
            }
            XCTFail("the body's error was swallowed")
        } catch is Deliberate {}
        XCTAssertNotEqual(port, 0)
        let listening = try await Loopback.accepts(port: port)
        XCTAssertFalse(listening, "the broker on port \(port) still listens after its test failed")
    }

    func testStoppingABrokerTwiceIsHarmless() async throws {
        let live = try await LiveBroker.start()
        try await live.stop()
        try await live.stop()
        let listening = try await Loopback.accepts(port: live.port)
        XCTAssertFalse(listening)
    }

    func testABrokerProcessNobodyHoldsAnyMoreIsKilled() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("support-\(UUID().uuidString.prefix(8))")
        var broker: BrokerProcess? = try await BrokerProcess.start(database: folder.appendingPathComponent("broker.sqlite").path)
        let port = try XCTUnwrap(broker?.port)
        let process = try XCTUnwrap(broker?.process)
        broker = nil  // what a test that threw leaves behind
        try await waitUntil("the released broker process exited") { !process.isRunning }
        let listening = try await Loopback.accepts(port: port)
        XCTAssertFalse(listening)
    }

    func testAWaitForAStreamNobodyFinishesFailsNamingIt() async throws {
        let endless = Task<Void, Never> {
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
            for await _ in stream {}
            continuation.finish()  // holds the continuation until here: nobody finishes the stream before
        }
        let started = ContinuousClock.now
        do {
            try await endless.value(waitingFor: "a stream nobody finishes", deadline: .now + .milliseconds(300))
            XCTFail("the wait ended")
        } catch let timeout as WaitTimeout {
            XCTAssertTrue(timeout.description.contains("a stream nobody finishes"), timeout.description)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        XCTAssertTrue(endless.isCancelled, "the abandoned task is cancelled")
    }

    func testAContinuationNobodyResumesFailsNamingIt() async throws {
        do {
            try await withDeadline("a latch nobody opens", deadline: .now + .milliseconds(300)) { await Latch().wait() }
            XCTFail("the wait ended")
        } catch let timeout as WaitTimeout {
            XCTAssertTrue(timeout.description.contains("a latch nobody opens"), timeout.description)
        }
    }

    func testAConditionThatNeverHoldsFailsNamingIt() async throws {
        do {
            try await waitUntil("pigs fly", deadline: .now + .milliseconds(200)) { false }
            XCTFail("the wait ended")
        } catch let timeout as WaitTimeout {
            XCTAssertTrue(timeout.description.contains("pigs fly"), timeout.description)
        }
    }

    func testABlockingCallRunsOnAThreadOfItsOwnAndFailsAtItsDeadline() async throws {
        let (reading, writing) = try pipeDescriptors()
        defer {
            close(writing)
            close(reading)
        }
        do {
            // A read from a pipe nobody writes to blocks forever.
            _ = try await blocking("a read nobody answers", deadline: .now + .milliseconds(300)) {
                var byte: UInt8 = 0
                return read(reading, &byte, 1)
            }
            XCTFail("the read returned")
        } catch let timeout as WaitTimeout {
            XCTAssertTrue(timeout.description.contains("a read nobody answers"), timeout.description)
        }
        // The pool is free: other async work goes on.
        let value = try await withDeadline("a plain await") { 42 }
        XCTAssertEqual(value, 42)
        _ = write(writing, [1], 1)  // lets the abandoned thread end
    }

    private func pipeDescriptors() throws -> (Int32, Int32) {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw POSIXError(.EMFILE) }
        return (descriptors[0], descriptors[1])
    }
}
