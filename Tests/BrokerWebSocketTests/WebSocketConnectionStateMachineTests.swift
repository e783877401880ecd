import NIOCore
import XCTest

@testable import BrokerWebSocket

/// The connection's close and heartbeat life alone: no channel, no clock, only events and the actions they
/// ask for.
final class WebSocketConnectionStateMachineTests: XCTestCase {
    private typealias Machine = WebSocketConnectionStateMachine

    func testTheFirstHeartbeatPingsAndTheNextPingsAgainOnlyIfTheClientWasHeard() {
        var life = Machine()
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .sendPing, "the first ping judges nothing")
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: true, dataWasWritten: false), .sendPing)
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .closeForPingTimeout)
        XCTAssertEqual(life.state, .closing(closeWritten: false))
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: true, dataWasWritten: false), .stop, "no heartbeat once closing")
        XCTAssertEqual(Machine.pingTimeout.code, 1001)
        XCTAssertEqual(Machine.pingTimeout.reason, "Ping timeout")
    }

    func testAPingDueWhileDataIsWrittenWaitsForTheNextFrameAndIsJudgedAHeartbeatAfterItWentOut() {
        var life = Machine()
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: true, dataWasWritten: true), .pingWithData)
        XCTAssertEqual(life.state, .open(ping: .ridesWithData))
        XCTAssertTrue(life.pingWritten(), "the next heartbeat is a heartbeat after the write")
        XCTAssertEqual(life.state, .open(ping: .written))
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: true, dataWasWritten: true), .pingWithData, "answered: the next one waits too")
        XCTAssertTrue(life.pingWritten())
        // Data written to the client is no answer from it.
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: true), .closeForPingTimeout)
        XCTAssertFalse(life.pingWritten(), "no heartbeat once closing")
    }

    func testAPingThatFoundNoDataForAHeartbeatGoesAloneAndIsJudgedAsAnyOther() {
        var life = Machine()
        _ = life.heartbeatDue(clientWasHeard: true, dataWasWritten: true)
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .sendPing, "nothing judged: no ping went out")
        XCTAssertEqual(life.state, .open(ping: .alone))
        XCTAssertTrue(life.pingWritten())
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .closeForPingTimeout)
    }

    func testAPingTheSocketNeverTookIsJudgedAtTheNextHeartbeatAsBefore() {
        var life = Machine()
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .sendPing)
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: true), .closeForPingTimeout, "a client that does not read")
    }

    func testTheWelcomeAloneIsNoDataFlowingAtTheFirstHeartbeat() {
        var silent = Machine()
        XCTAssertEqual(silent.heartbeatDue(clientWasHeard: false, dataWasWritten: true), .sendPing)
        var talking = Machine()
        XCTAssertEqual(talking.heartbeatDue(clientWasHeard: true, dataWasWritten: true), .pingWithData)
    }

    func testABrokerCloseStartsTheGraceOnceAndStopsReading() {
        var life = Machine(grace: .seconds(3))
        XCTAssertTrue(life.isOpen)
        XCTAssertEqual(life.brokerCloseQueued(), .startGrace(.seconds(3)))
        XCTAssertFalse(life.isOpen)
        XCTAssertEqual(life.brokerCloseQueued(), .none, "a second close starts nothing")
        XCTAssertEqual(life.closeFrameWritten(), .none)
        XCTAssertEqual(life.state, .closing(closeWritten: true))
    }

    func testACloseFrameSeenWrittenBeforeItsQueuingIsReportedStillStartsOneGrace() {
        var life = Machine()
        XCTAssertEqual(life.closeFrameWritten(), .startGrace(Machine.closeGrace))
        XCTAssertEqual(life.brokerCloseQueued(), .none)
        XCTAssertEqual(life.clientCloseReceived(code: 1000), .closeTCP, "the client answered the close it received")
    }

    func testTheClientsAnswerToTheBrokersCloseClosesTCPWithoutAnEcho() {
        var life = Machine()
        _ = life.brokerCloseQueued()
        _ = life.closeFrameWritten()
        XCTAssertEqual(life.clientCloseReceived(code: 1001), .closeTCP)
        XCTAssertEqual(life.state, .closed)
        XCTAssertEqual(life.closeGraceExpired(), .none, "nothing to cut once closed")
    }

    func testAClientsCloseWhileTheBrokersIsStillQueuedIsEchoedInItsPlace() {
        var life = Machine()
        _ = life.brokerCloseQueued()
        XCTAssertEqual(life.clientCloseReceived(code: 4321), .echo(code: 4321, startGrace: nil), "the grace already runs")
        XCTAssertEqual(life.closeFrameWritten(), .none)
        XCTAssertEqual(life.echoWritten(), .closeTCP)
    }

    func testAClientsCloseIsEchoedThenTCPClosedAndTheGraceCutsAnEchoThatCannotBeWritten() {
        var life = Machine()
        XCTAssertEqual(life.clientCloseReceived(code: 1000), .echo(code: 1000, startGrace: Machine.closeGrace))
        XCTAssertFalse(life.isOpen)
        XCTAssertEqual(life.clientCloseReceived(code: 1000), .none, "a second close is not answered")
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .stop)
        XCTAssertEqual(life.closeGraceExpired(), .abort)
        XCTAssertEqual(life.echoWritten(), .none, "already cut")
    }

    func testTheGraceCutsABrokerCloseTheClientNeverAnswers() {
        var life = Machine()
        _ = life.heartbeatDue(clientWasHeard: false, dataWasWritten: false)
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .closeForPingTimeout)
        XCTAssertEqual(life.closeGraceExpired(), .abort)
        XCTAssertEqual(life.state, .closed)
    }

    func testAGraceExpiringWhileOpenCutsNothing() {
        var life = Machine()
        XCTAssertEqual(life.closeGraceExpired(), .none)
        XCTAssertTrue(life.isOpen)
    }

    func testNothingHappensOnceTheChannelIsGone() {
        var life = Machine()
        life.channelInactive()
        XCTAssertEqual(life.heartbeatDue(clientWasHeard: false, dataWasWritten: false), .stop)
        XCTAssertEqual(life.brokerCloseQueued(), .none)
        XCTAssertEqual(life.closeFrameWritten(), .none)
        XCTAssertEqual(life.clientCloseReceived(code: 1000), .none)
        XCTAssertEqual(life.closeGraceExpired(), .none)
    }

    func testTheEchoKeepsTheCodesAPeerMaySendAndAnswersOthersWith1002() {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4321, 4999] {
            XCTAssertEqual(Machine.echoCode(for: code), code, "\(code)")
        }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65_535] {
            XCTAssertEqual(Machine.echoCode(for: code), 1002, "\(code)")
        }
        XCTAssertNil(Machine.echoCode(for: nil), "a close without a code is answered without one")
    }
}
