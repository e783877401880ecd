import NIOCore
import XCTest

@testable import BrokerTestSupport
@testable import BrokerWebSocket

/// Heartbeat pings ride in the radio wake-ups data already causes: a phone that is tracked or tracking is pinged
/// right after a frame it was written anyway, never on its own, while an idle connection is pinged once per
/// heartbeat and a client that does not answer is still closed. An hour of tracking on `EmbeddedChannel`s with
/// virtual time, with the default heartbeat of 30 seconds.
final class PingsRideWithDataTests: XCTestCase {
    private typealias Socket = EmbeddedWebSocket
    private let heartbeat = 30
    /// How long a phone's radio stays up after a frame: a frame written later than this after the last data frame
    /// wakes it up on its own.
    private let awake = 1

    /// What one phone sees of its socket, second by second: the frames the broker wrote to it and when.
    private struct Phone {
        let socket: Socket
        /// Whether the phone answers the broker's pings (every WebSocket client does by itself).
        var answersPings = true
        private(set) var lastDataAt: Int?
        /// Frames written more than ``awake`` after the last data frame: each wakes the phone's radio by itself.
        private(set) var loneFrames = 0
        private(set) var pingTimes: [Int] = []
        private(set) var close: (at: Int, code: UInt16?, reason: String)?

        init(_ socket: Socket, answersPings: Bool = true) {
            self.socket = socket
            self.answersPings = answersPings
        }

        /// Reads what the broker wrote up to second `now`, and answers its pings at once.
        mutating func read(at now: Int, awake: Int) throws {
            for frame in try socket.frames() {
                if frame.opcode == Socket.text || frame.opcode == Socket.binary {
                    lastDataAt = now
                    continue
                }
                if lastDataAt.map({ now - $0 > awake }) ?? true { loneFrames += 1 }
                if frame.opcode == Socket.ping {
                    pingTimes.append(now)
                    if answersPings { try socket.send(Socket.pong, frame.payload) }
                }
                if let close = frame.close, self.close == nil { self.close = (now, close.code, close.reason) }
            }
        }
    }

    /// A volunteer and the donor watching it, second by second for `seconds`: the volunteer publishes every 20
    /// seconds (5 seconds into each 20, so never at a heartbeat), each publish with an id, so it is acked; the
    /// donor receives each position. Stops publishing after `publishUntil` seconds.
    private func track(
        seconds: Int, volunteerAnswersPings: Bool = true, donorAnswersPings: Bool = true, publishUntil: Int = .max
    ) throws -> (broker: EmbeddedBroker, volunteer: Phone, donor: Phone) {
        let broker = EmbeddedBroker(heartbeatSeconds: heartbeat)
        broker.startTrip()
        var volunteer = Phone(try broker.connect(EmbeddedBroker.volunteer), answersPings: volunteerAnswersPings)
        var donor = Phone(try broker.connect(EmbeddedBroker.donor), answersPings: donorAnswersPings)
        try donor.socket.sendText(#"{"type":"subscribe","id":"s1","donation":"d-1"}"#)
        try volunteer.read(at: 0, awake: awake)
        try donor.read(at: 0, awake: awake)
        for second in 1...seconds {
            broker.advance(by: .seconds(1))
            if second % 20 == 5, second <= publishUntil, volunteer.socket.isOpen {
                try volunteer.socket.sendText(broker.publishFrame(id: "p\(second)"))
            }
            try volunteer.read(at: second, awake: awake)
            try donor.read(at: second, awake: awake)
        }
        return (broker, volunteer, donor)
    }

    func testAnHourOfTrackingWakesNeitherPhoneForAPing() throws {
        let hour = try track(seconds: 3_600)
        defer {
            hour.volunteer.socket.stop()
            hour.donor.socket.stop()
        }
        print("lone wake-ups in an hour of tracking: volunteer \(hour.volunteer.loneFrames), donor \(hour.donor.loneFrames)")
        print("pings in an hour of tracking: volunteer \(hour.volunteer.pingTimes.count), donor \(hour.donor.pingTimes.count)")
        XCTAssertEqual(hour.volunteer.loneFrames, 0, "pings that woke the volunteer's phone by themselves")
        XCTAssertEqual(hour.donor.loneFrames, 0, "pings that woke the donor's phone by themselves")
        for (name, phone) in [("volunteer", hour.volunteer), ("donor", hour.donor)] {
            XCTAssertTrue(phone.socket.isOpen, name)
            // Still pinged: a ping comes due every heartbeat and waits at most for the next position (20 s).
            XCTAssertGreaterThanOrEqual(phone.pingTimes.count, 3_600 / (heartbeat + 20), name)
            let gaps = zip(phone.pingTimes.dropFirst(), phone.pingTimes).map { $0 - $1 }
            XCTAssertLessThanOrEqual(gaps.max() ?? 0, 2 * heartbeat, "\(name): pings \(phone.pingTimes)")
        }
    }

    func testAnIdleConnectionIsPingedOncePerHeartbeat() throws {
        let broker = EmbeddedBroker(heartbeatSeconds: heartbeat)
        var idle = Phone(try broker.connect(EmbeddedBroker.donor))
        defer { idle.socket.stop() }
        try idle.read(at: 0, awake: awake)
        for second in 1...3_600 {
            broker.advance(by: .seconds(1))
            try idle.read(at: second, awake: awake)
        }
        XCTAssertEqual(idle.pingTimes, Array(stride(from: heartbeat, through: 3_600, by: heartbeat)))
        XCTAssertEqual(idle.loneFrames, 3_600 / heartbeat, "with no data, each ping goes alone")
        XCTAssertTrue(idle.socket.isOpen)
    }

    // MARK: A client that does not answer

    func testADonorReceivingPositionsThatNeverAnswersIsClosedAHeartbeatAfterItsPingWentOut() throws {
        let trip = try track(seconds: 3 * heartbeat, donorAnswersPings: false)
        defer {
            trip.volunteer.socket.stop()
            trip.donor.socket.stop()
        }
        // Due at 30 s, while positions flow: the ping goes with the position of 45 s.
        XCTAssertEqual(trip.donor.pingTimes, [45])
        // The positions the broker writes to the donor are no answer: a heartbeat after the ping, it is closed.
        XCTAssertEqual(trip.donor.close?.at, 45 + heartbeat)
        XCTAssertEqual(trip.donor.close?.code, 1001)
        XCTAssertEqual(trip.donor.close?.reason, "Ping timeout")
        XCTAssertFalse(trip.donor.socket.isOpen, "cut once the close grace passed")
        XCTAssertTrue(trip.volunteer.socket.isOpen)
    }

    func testAPingWaitingForDataGoesAloneAfterAHeartbeatWithoutAndTheSilentClientIsClosed() throws {
        let trip = try track(seconds: 4 * heartbeat, donorAnswersPings: false, publishUntil: 5)
        defer {
            trip.volunteer.socket.stop()
            trip.donor.socket.stop()
        }
        // Due at 30 s after the position of 5 s; nothing more flows, so it goes alone a heartbeat later.
        XCTAssertEqual(trip.donor.pingTimes, [2 * heartbeat])
        XCTAssertEqual(trip.donor.close?.at, 3 * heartbeat)
        XCTAssertEqual(trip.donor.close?.reason, "Ping timeout")
        XCTAssertFalse(trip.donor.socket.isOpen)
    }

    func testAVolunteerThatPublishesButNeverAnswersPingsStaysConnectedAsAnyFrameShowsItIsThere() throws {
        let trip = try track(seconds: 600, volunteerAnswersPings: false)
        defer {
            trip.volunteer.socket.stop()
            trip.donor.socket.stop()
        }
        XCTAssertNil(trip.volunteer.close.map { "\($0)" })
        XCTAssertTrue(trip.volunteer.socket.isOpen)
        XCTAssertEqual(trip.volunteer.loneFrames, 0)
    }
}
