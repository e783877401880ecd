import BrokerCore
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

@testable import BrokerTestSupport

/// The test support's waits keep their promise without a broker: a wait that would never end fails at its deadline,
/// naming what it waited for, and a blocking call never holds the cooperative pool. (That a broker a test starts is
/// stopped when the test fails: TestSupportTests in Tests/BrokerTests.)
final class DeadlineTests: XCTestCase {
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
