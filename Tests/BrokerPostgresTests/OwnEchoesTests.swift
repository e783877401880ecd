import XCTest

@testable import BrokerPostgres

/// A node drops unopened only its own payloads coming back on the channel it sent them on; anything else is opened.
final class OwnEchoesTests: XCTestCase {
    func testOnlyTheExactPayloadOnItsOwnChannelIsDroppedAndOnlyOnce() {
        let echoes = OwnEchoes()
        echoes.sent("s1.AAAA", on: "lb_events_s3")
        XCTAssertFalse(echoes.isOwn("s1.AAAA", on: "lb_events_s4"), "moved to another shard: opened (and rejected there)")
        XCTAssertFalse(echoes.isOwn("s1.AAAB", on: "lb_events_s3"), "altered: opened")
        XCTAssertFalse(echoes.isOwn("s1.AAAA", on: "lb_events"), "moved to the control channel: opened")
        XCTAssertTrue(echoes.isOwn("s1.AAAA", on: "lb_events_s3"))
        XCTAssertFalse(echoes.isOwn("s1.AAAA", on: "lb_events_s3"), "a replay is opened, and dropped for its origin")
    }

    func testTheOldestAreForgottenPastTheCapacity() {
        let echoes = OwnEchoes(capacity: 3)
        for n in 0..<5 { echoes.sent("s1.\(n)", on: "lb_events_s1") }
        XCTAssertFalse(echoes.isOwn("s1.0", on: "lb_events_s1"))
        XCTAssertFalse(echoes.isOwn("s1.1", on: "lb_events_s1"))
        XCTAssertTrue(echoes.isOwn("s1.2", on: "lb_events_s1"))
        XCTAssertTrue(echoes.isOwn("s1.4", on: "lb_events_s1"))
    }
}
