import NIOCore
import NIOEmbedded
import XCTest

@testable import BrokerWebSocket

/// One event loop's list of connection deadlines (heartbeats, close graces), served by one scheduled task: each
/// connection is told at its own deadline, never before, in order, and never after it left the list.
final class ConnectionTimersTests: XCTestCase {
    /// A connection that writes down when it was told.
    private final class Connection: TimedConnection {
        let name: String
        let log: Log
        var timerLinks = TimerLinks<Connection>()
        /// Called when told, before it is written down (a heartbeat re-arms itself here).
        var onExpiry: ((Connection, ConnectionTimers<Connection>) -> Void)?

        init(_ name: String, log: Log) {
            self.name = name
            self.log = log
        }

        func timerExpired(_ timers: ConnectionTimers<Connection>) {
            log.entries.append("\(name)@\(log.loop.now.uptimeNanoseconds / 1_000_000)")
            onExpiry?(self, timers)
        }
    }

    private final class Log {
        let loop: EmbeddedEventLoop
        var entries: [String] = []

        init(loop: EmbeddedEventLoop) {
            self.loop = loop
        }

        /// The entries since the last call.
        func drain() -> [String] {
            defer { entries = [] }
            return entries
        }
    }

    private var loop: EmbeddedEventLoop!
    private var log: Log!
    private var timers: ConnectionTimers<Connection>!

    override func setUp() {
        loop = EmbeddedEventLoop()
        log = Log(loop: loop)
        timers = ConnectionTimers(eventLoop: loop)
    }

    override func tearDown() {
        timers = nil
        try? loop.syncShutdownGracefully()
    }

    private func connections(_ count: Int) -> [Connection] {
        (0..<count).map { Connection("c\($0)", log: log) }
    }

    func testEachConnectionIsToldAtItsOwnDeadlineAndNotBefore() {
        let c = connections(3)
        timers.insert(c[0], in: .milliseconds(1_000))
        loop.advanceTime(by: .milliseconds(300))
        timers.insert(c[1], in: .milliseconds(1_000))
        timers.insert(c[2], in: .milliseconds(1_000))
        loop.advanceTime(by: .milliseconds(699))
        XCTAssertEqual(log.drain(), [], "nobody before the first deadline")
        loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(log.drain(), ["c0@1000"])
        loop.advanceTime(by: .milliseconds(299))
        XCTAssertEqual(log.drain(), [])
        loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(log.drain(), ["c1@1300", "c2@1300"], "in the order they were listed")
        XCTAssertTrue(timers.isEmpty)
    }

    func testAConnectionThatLeftIsNeverToldWhereverItStood() {
        for leaving in 0..<3 {
            let timers = ConnectionTimers<Connection>(eventLoop: loop)
            let start = loop.now.uptimeNanoseconds / 1_000_000
            let c = connections(3)
            for (index, connection) in c.enumerated() {
                timers.insert(connection, in: .milliseconds(Int64(100 * (index + 1))))
            }
            timers.remove(c[leaving])
            timers.remove(c[leaving])  // a second removal changes nothing
            loop.advanceTime(by: .seconds(1))
            let expected = c.indices.filter { $0 != leaving }.map { "c\($0)@\(start + UInt64(100 * ($0 + 1)))" }
            XCTAssertEqual(log.drain(), expected, "c\(leaving) left")
            XCTAssertTrue(timers.isEmpty)
        }
    }

    func testListingAgainMovesTheDeadline() {
        let c = connections(2)
        timers.insert(c[0], in: .milliseconds(100))
        timers.insert(c[1], in: .milliseconds(200))
        timers.insert(c[0], in: .milliseconds(300))
        loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(log.drain(), ["c1@200", "c0@300"], "told once, at the new deadline")
    }

    func testADeadlineEarlierThanEveryOtherIsServedOnTime() {
        let c = connections(3)
        timers.insert(c[0], in: .seconds(30))
        timers.insert(c[1], in: .seconds(2))
        timers.insert(c[2], in: .seconds(10))
        loop.advanceTime(by: .seconds(2))
        XCTAssertEqual(log.drain(), ["c1@2000"])
        loop.advanceTime(by: .seconds(30))
        XCTAssertEqual(log.drain(), ["c2@10000", "c0@30000"])
    }

    func testAConnectionRelistedWhenToldIsToldEveryPeriod() {
        let c = connections(2)
        for connection in c {
            connection.onExpiry = { connection, timers in timers.insert(connection, in: .seconds(1)) }
        }
        timers.insert(c[0], in: .seconds(1))
        loop.advanceTime(by: .milliseconds(500))
        timers.insert(c[1], in: .seconds(1))
        loop.advanceTime(by: .milliseconds(2_500))
        XCTAssertEqual(log.drain(), ["c0@1000", "c1@1500", "c0@2000", "c1@2500", "c0@3000"])
        timers.remove(c[0])
        loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(log.drain(), ["c1@3500"], "only the one still listed")
    }

    func testAConnectionRemovedByAnotherDueAtTheSameTimeIsNotTold() {
        let c = connections(3)
        let second = c[1]
        c[0].onExpiry = { _, timers in timers.remove(second) }
        for connection in c { timers.insert(connection, in: .seconds(1)) }
        loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(log.drain(), ["c0@1000", "c2@1000"])
    }

    func testTenThousandConnectionsAreEachToldOnce() {
        let c = connections(10_000)
        for (index, connection) in c.enumerated() {
            if index % 100 == 0 { loop.advanceTime(by: .milliseconds(1)) }
            timers.insert(connection, in: .seconds(30))
        }
        for connection in c where Int(connection.name.dropFirst())! % 3 == 0 { timers.remove(connection) }
        loop.advanceTime(by: .seconds(31))
        let told = log.drain()
        XCTAssertEqual(told.count, c.count - (c.count + 2) / 3)
        XCTAssertEqual(Set(told.map { $0.split(separator: "@")[0] }).count, told.count, "each once")
        XCTAssertTrue(timers.isEmpty)
    }
}
