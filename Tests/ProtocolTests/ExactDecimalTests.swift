@testable import BrokerProtocol
import DeterministicRandom
import XCTest

/// The publish fast path reads most numbers without strtod: whenever the shortcut answers, it must be
/// the very Double `Double(String)` reads, bit for bit, and it must leave to strtod what it cannot do exactly.
final class ExactDecimalTests: XCTestCase {
    private func exact(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer(ExactDecimal.value(of:))
    }

    /// The shortcut answers `text` with the bits strtod gives, or leaves it to strtod when `answers` is false.
    private func assertReads(_ text: String, answers: Bool? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let reference = Double(text)!
        let value = exact(text)
        if let answers { XCTAssertEqual(value != nil, answers, text, file: file, line: line) }
        if let value { XCTAssertEqual(value.bitPattern, reference.bitPattern, text, file: file, line: line) }
    }

    func testEdgeCasesReadBitForBitOrGoToStrtod() {
        for text in ["0", "-0", "0.0", "-0.0", "-0.000", "1", "-1", "0.1", "0.2", "0.3", "0.5", "100", "359.99999"] {
            assertReads(text, answers: true)
        }
        XCTAssertEqual(exact("-0")?.sign, .minus)
        XCTAssertEqual(exact("-0.0")?.sign, .minus)
        XCTAssertEqual(exact("0")?.sign, .plus)
        // 0.1 + 0.2 as it prints, and its neighbours: 17 significant digits, strtod's.
        assertReads("0.30000000000000004", answers: false)
        assertReads("0.30000000000000001", answers: false)
        assertReads("89.99999999999999999", answers: false)
        assertReads("-179.123456789012345678", answers: false)
        assertReads("1.000000000000000000001", answers: false)
        // At the edges of the shortcut: 2^53 and 2^53 + 1 as mantissas, 16 digits, 22 and 23 places.
        assertReads("9007199254740992", answers: true)
        assertReads("9007199254740993", answers: false)
        assertReads("900719925474099.3", answers: false)
        assertReads("900719925474099.2", answers: true)
        assertReads("1234567890123456", answers: true)
        assertReads("12345678901234567", answers: false)
        assertReads("0.0000000000000000000001", answers: true)
        assertReads("0.00000000000000000000001", answers: false)
        assertReads("1.5000000000000000000", answers: false)
        assertReads("000.5")
        assertReads("52.520008", answers: true)
        assertReads("-34.6037", answers: true)
        assertReads("13.404954", answers: true)
    }

    /// Decimals as phones write them (up to 15 places and up to 6 integer digits, signs, leading zeros after the
    /// point) and long ones: every answer is strtod's bits, and the common ones are answered.
    func testASeededSampleReadsBitForBitAsDoubleFromString() {
        var random = SeededRandom(seed: 1_717)
        var answered = 0
        var mismatches = 0
        let samples = 200_000
        for _ in 0..<samples {
            let sign = random.next() % 2 == 0 ? "" : "-"
            let integer = String(random.next() % [1, 10, 100, 1_000, 1_000_000, 10_000_000_000_000][Int(random.next() % 6)])
            let places = Int(random.next() % 25)
            var fraction = ""
            for _ in 0..<places { fraction.append(Character(String(random.next() % 10))) }
            let text = places == 0 ? sign + integer : sign + integer + "." + fraction
            guard let value = exact(text) else { continue }
            answered += 1
            if value.bitPattern != Double(text)!.bitPattern {
                mismatches += 1
                if mismatches <= 10 { XCTFail("\(text): \(value) != \(Double(text)!)") }
            }
        }
        XCTAssertEqual(mismatches, 0)
        // Not vacuous: most of the sample takes the shortcut.
        XCTAssertGreaterThan(answered, samples / 2)
    }

    /// Every Double in the validator's ranges, printed shortest (as phones' JSON libraries print them), reads back
    /// as itself through the fast path, shortcut or not.
    func testShortestPrintedCoordinatesReadBackAsThemselves() {
        var random = SeededRandom(seed: 2_026)
        let ranges: [ClosedRange<Double>] = [-90...90, -180...180, 0...359.999999, 0...10_000, 0...300]
        for _ in 0..<20_000 {
            for range in ranges {
                let value = random.uniform(range)
                var text = value.description
                if text.hasSuffix(".0") { text.removeLast(2) }
                guard !text.contains("e") else { continue }
                assertReads(text)
                let frame = #"{"type":"publish","position":{"lat":1,"lon":\#(text),"timestamp":1}}"#
                let publish = Array(frame.utf8).withUnsafeBufferPointer(PublishFastPath.parse)
                XCTAssertEqual(publish?.position.lon.bitPattern, value.bitPattern, text)
            }
        }
    }
}
