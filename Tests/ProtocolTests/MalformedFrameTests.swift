import BrokerProtocol
import XCTest

/// Each class of malformed client frame maps to its documented error code, with the request id when readable.
final class MalformedFrameTests: XCTestCase {
    private let decoder = ClientFrameDecoder()
    private let now: Int64 = 1_763_757_670_000

    private func rejection(_ text: String) -> ClientFrameDecoder.Rejection? {
        if case .failure(let rejection) = decoder.decode(Array(text.utf8)) { return rejection }
        return nil
    }

    func testEachMalformedClassHasItsCode() {
        let cases: [(String, ErrorCode, String?)] = [
            ("not json", .badRequest, nil),
            ("", .badRequest, nil),
            ("[1,2]", .badRequest, nil),
            (#"{"id":"x1"}"#, .badRequest, "x1"),
            (#"{"type":7,"id":"x2"}"#, .badRequest, "x2"),
            (#"{"type":"teleport","id":"x3"}"#, .badRequest, "x3"),
            (#"{"type":"publish","id":"p1"}"#, .invalidPosition, "p1"),
            (#"{"type":"publish","id":"p2","position":{"lat":"north","lon":1,"timestamp":1}}"#, .invalidPosition, "p2"),
            (#"{"type":"publish","id":"p3","position":{"lon":1,"timestamp":1}}"#, .invalidPosition, "p3"),
            (#"{"type":"publish","id":"p4","position":{"lat":1,"lon":1,"timestamp":1.5}}"#, .invalidPosition, "p4"),
            (#"{"type":"publish","id":"p5","position":{"lat":1e999,"lon":1,"timestamp":1}}"#, .badRequest, "p5"),
            (#"{"type":"publish","id":"p6","position":[1,2]}"#, .invalidPosition, "p6"),
            (#"{"type":"publish","id":"p7","channel":"has space@x.org","position":{"lat":1,"lon":1,"timestamp":1}}"#, .badRequest, "p7"),
            (#"{"type":"subscribe","id":"s1"}"#, .badRequest, "s1"),
            (#"{"type":"subscribe","id":"s2","channel":"a@x.org","donation":"d-1"}"#, .badRequest, "s2"),
            (#"{"type":"subscribe","id":"s3","channel":""}"#, .badRequest, "s3"),
            (#"{"type":"subscribe","id":"s4","donation":"d 1; DROP TABLE"}"#, .badRequest, "s4"),
            (#"{"type":"subscribe","id":"s5","channel":"a@x.org","since":-1}"#, .badRequest, "s5"),
            (#"{"type":"subscribe","id":"s6","channel":"a@x.org","since":"yesterday"}"#, .badRequest, "s6"),
            (#"{"type":"unsubscribe","id":"u1"}"#, .badRequest, "u1"),
            (#"{"type":"subscribe","id":"\#(String(repeating: "i", count: 65))","channel":"a@x.org"}"#, .badRequest, nil),
        ]
        for (text, code, re) in cases {
            guard let rejection = rejection(text) else {
                XCTFail("accepted \(text)")
                continue
            }
            XCTAssertEqual(rejection.error.code, code, "\(text): \(rejection.error.message)")
            XCTAssertEqual(rejection.re, re, text)
            XCTAssertFalse(rejection.error.message.isEmpty)
        }
    }

    func testMessagesNameTheField() {
        XCTAssertEqual(rejection(#"{"type":"publish","position":{"lat":"north","lon":1,"timestamp":1}}"#)?.error.message, "position.lat must be a number")
        XCTAssertEqual(rejection(#"{"type":"publish","position":{"lon":1,"timestamp":1}}"#)?.error.message, "position.lat is required")
        XCTAssertEqual(rejection(#"{"id":"x"}"#)?.error.message, #"the frame has no "type" field"#)
        XCTAssertEqual(rejection(#"{"type":"publish","position":{"lat":1,"lon":1,"timestamp":1.5}}"#)?.error.message,
                       "position.timestamp has a value out of range or of the wrong kind")
    }

    func testChannelsAreCanonicalLowerCase() throws {
        let frame = try decoder.decode(Array(#"{"type":"subscribe","channel":"Vol@Example.ORG"}"#.utf8)).get()
        XCTAssertEqual(frame, .subscribe(.init(target: .channel("vol@example.org"))))
    }

    func testPositionRanges() {
        func code(_ position: Position) -> ErrorCode? { position.validationError(now: now)?.code }
        XCTAssertNil(code(Position(lat: -90, lon: 180, accuracy: 0, speed: 0, heading: 0, timestamp: now)))
        XCTAssertNil(code(Position(lat: 90, lon: -180, heading: 359.9, timestamp: now + 60_000)))
        let invalid = [
            Position(lat: 90.0001, lon: 0, timestamp: now),
            Position(lat: -90.0001, lon: 0, timestamp: now),
            Position(lat: .nan, lon: 0, timestamp: now),
            Position(lat: 0, lon: 180.0001, timestamp: now),
            Position(lat: 0, lon: .infinity, timestamp: now),
            Position(lat: 0, lon: 0, accuracy: -1, timestamp: now),
            Position(lat: 0, lon: 0, speed: -0.1, timestamp: now),
            Position(lat: 0, lon: 0, heading: 360, timestamp: now),
            Position(lat: 0, lon: 0, heading: -1, timestamp: now),
            Position(lat: 0, lon: 0, timestamp: 0),
            Position(lat: 0, lon: 0, timestamp: now + 60_001),
        ]
        for position in invalid {
            XCTAssertEqual(code(position), .invalidPosition, "\(position)")
        }
    }

    func testDonationUpdateValidation() {
        let home = Home(lat: -34.6, lon: -58.4)
        let institution = Institution(lat: -34.61, lon: -58.41, name: "Caritas")
        func message(_ update: DonationUpdate) -> String? {
            if case .failure(let error) = update.validated() { return error.message }
            return nil
        }
        XCTAssertNil(message(.init(donor: "D@x.org", volunteer: nil, state: .created, home: home, institution: nil)))
        XCTAssertEqual(try? DonationUpdate(donor: "D@x.org", volunteer: "V@X.org", state: .beingLookedFor, home: home, institution: institution).validated().get().volunteer, "v@x.org")
        XCTAssertEqual(message(.init(donor: "", volunteer: nil, state: .created, home: home, institution: nil)),
                       "donor is not a usable identity: it is empty")
        XCTAssertEqual(message(.init(donor: "d@x.org", volunteer: nil, state: .beingLookedFor, home: home, institution: institution)),
                       "a donation in BEING-LOOKED-FOR must have a volunteer")
        XCTAssertEqual(message(.init(donor: "d@x.org", volunteer: "v@x.org", state: .beingLookedFor, home: home, institution: nil)),
                       "a donation in BEING-LOOKED-FOR must have an institution")
        XCTAssertEqual(message(.init(donor: "d@x.org", volunteer: "D@x.org", state: .created, home: home, institution: nil)),
                       "a donor cannot carry their own donation: volunteer and donor are the same")
        XCTAssertEqual(message(.init(donor: "d@x.org", volunteer: nil, state: .created, home: Home(lat: 91, lon: 0), institution: nil)),
                       "home.lat must be a number from -90 to 90")
    }

    func testDonationIDs() {
        XCTAssertTrue(DonationID.isValid("d-123_A.b:c"))
        XCTAssertFalse(DonationID.isValid(""))
        XCTAssertFalse(DonationID.isValid("d/1"))
        XCTAssertFalse(DonationID.isValid("d 1"))
        XCTAssertFalse(DonationID.isValid(String(repeating: "a", count: 129)))
    }
}
