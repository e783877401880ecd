@testable import BrokerProtocol
import DeterministicRandom
import XCTest

/// The position frame encoder writes its bytes directly; these tests hold it to the bytes the encoder wrote
/// before, kept below as the oracle, over every kind of number and string a frame can carry.
final class PositionFrameEncoderTests: XCTestCase {
    /// The encoder as it was before it wrote its bytes directly: numbers through `description` with ".0" trimmed off, integers through
    /// `String(_:)`, strings escaped byte by byte. Kept verbatim as the reference the direct writer must match.
    private enum Oracle {
        static func encode(channel: String, seq: Int64, position: Position) -> [UInt8] {
            var out: [UInt8] = []
            append(&out, #"{"channel":"#)
            appendString(&out, channel)
            append(&out, #","position":"#)
            appendPosition(&out, position)
            append(&out, #","seq":"#)
            append(&out, String(seq))
            append(&out, #","type":"position"}"#)
            return out
        }

        static func appendPosition(_ out: inout [UInt8], _ position: Position) {
            out.append(UInt8(ascii: "{"))
            var first = true
            func field(_ name: String, _ value: Double?) {
                guard let value else { return }
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(UInt8(ascii: "\""))
                append(&out, name)
                append(&out, "\":")
                appendNumber(&out, value)
            }
            field("accuracy", position.accuracy)
            field("heading", position.heading)
            field("lat", position.lat)
            field("lon", position.lon)
            field("speed", position.speed)
            append(&out, #","timestamp":"#)
            append(&out, String(position.timestamp))
            out.append(UInt8(ascii: "}"))
        }

        static func number(_ value: Double) -> String {
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            return text
        }

        static func appendNumber(_ out: inout [UInt8], _ value: Double) {
            append(&out, number(value))
        }

        static func append(_ out: inout [UInt8], _ text: String) {
            out.append(contentsOf: text.utf8)
        }

        static func appendString(_ out: inout [UInt8], _ text: String) {
            out.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): append(&out, "\\\"")
                case UInt8(ascii: "\\"): append(&out, "\\\\")
                case 0x0A: append(&out, "\\n")
                case 0x0D: append(&out, "\\r")
                case 0x09: append(&out, "\\t")
                case 0x08: append(&out, "\\b")
                case 0x0C: append(&out, "\\f")
                case 0x00..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    append(&out, "\\u00")
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    private func written(_ value: Double) -> String {
        write { $0.number(value) }
    }

    private func writtenInteger(_ value: Int64) -> String {
        write { $0.integer(value) }
    }

    private func write(_ body: (inout PositionFrameEncoder.ByteWriter) -> Void) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: PositionFrameEncoder.maximumNumberBytes) { buffer in
            var writer = PositionFrameEncoder.ByteWriter(buffer)
            body(&writer)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<writer.count]), as: UTF8.self)
        }
    }

    /// The doubles where formatting changes shape: signs, zeros, whole numbers, the switch to exponents at 1e-4
    /// below and 2^53 above, subnormals, the extremes, and the neighbours of each.
    private var edgeDoubles: [Double] {
        var values: [Double] = [
            0, -0.0, 1, -1, 0.5, 0.1, 0.2, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 100, 1_000_000, 123456.789, 359.99999,
            1e-7, 1e-5, 1e-4, 0.001, 1e15, 1e16, 1e17, 1e21, 1e22, 1e23, 1e-300, 1e300, 1e308,
            9_007_199_254_740_992, 9_007_199_254_740_994, 4_503_599_627_370_496.5, 2e53, 1.7976931348623157e308,
            .ulpOfOne, .leastNormalMagnitude, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .pi,
            90, -90, 180, -180, 360, 89.99999999999999, -179.123456789012345678, 52.520008, 13.404954,
        ]
        for exponent in -324...308 { values.append(Double("1e\(exponent)")!) }
        for power in -1074...1023 { values.append(Double(sign: .plus, exponent: power, significand: 1)) }
        values += values.map { -$0 }
        values += values.flatMap { [$0.nextUp, $0.nextDown] }
        return values.filter(\.isFinite)
    }

    func testNumbersAreWrittenAsTheyWereForTheEdgeCases() {
        for value in edgeDoubles {
            XCTAssertEqual(written(value), Oracle.number(value), "\(value.bitPattern)")
        }
        XCTAssertEqual(written(-0.0), "-0")
        XCTAssertEqual(written(100), "100")
        XCTAssertEqual(written(1e-7), "1e-07")
    }

    /// A large seeded sample: any finite bit pattern, and values in each range the validator accepts (latitude,
    /// longitude, heading, accuracy, speed), whole and rounded to the decimals phones send.
    func testNumbersAreWrittenAsTheyWereForASeededSample() {
        var random = SeededRandom(seed: 17)
        var mismatches = 0
        func check(_ value: Double) {
            guard value.isFinite else { return }
            if written(value) != Oracle.number(value) {
                mismatches += 1
                if mismatches <= 10 { XCTFail("\(value) (bits \(value.bitPattern)): \(written(value)) != \(Oracle.number(value))") }
            }
        }
        let ranges: [ClosedRange<Double>] = [-90...90, -180...180, 0...359.999999, 0...10_000, 0...300, 0...1e-3, 1e6...1e17]
        for _ in 0..<40_000 {
            check(Double(bitPattern: random.next()))
            for range in ranges {
                let value = random.uniform(range)
                check(value)
                let decimals = Double(Int(random.next() % 10))
                let scale = (0..<Int(decimals)).reduce(1.0) { scaled, _ in scaled * 10 }
                check((value * scale).rounded() / scale)
                check(value.rounded())
            }
        }
        XCTAssertEqual(mismatches, 0)
    }

    /// A decimal of `digits` significant digits and `places` decimals, as a phone or a JSON parser would make it.
    private struct Decimal {
        var mantissa: UInt64
        var places: Int
        var negative: Bool

        /// Its spelling, such as "-0.00123"; `Double(_:)` reads it back correctly rounded.
        var text: String {
            var digits = String(mantissa)
            if places > 0 {
                if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
                digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
            }
            return (negative ? "-" : "") + digits
        }

        /// The same decimal without trailing zeros after the point, as ``ShortestDecimal`` answers it.
        var trimmed: (mantissa: UInt64, fractionDigits: Int) {
            var mantissa = mantissa, places = places
            while places > 0, mantissa % 10 == 0 {
                mantissa /= 10
                places -= 1
            }
            return (mantissa, places)
        }
    }

    /// Decimals of 1 to 15 significant digits in each range the validator accepts (latitude, longitude, heading,
    /// accuracy and speed, which have no upper bound, so up to timestamp-sized and 15-digit values too), and the
    /// neighbours of each (nextUp, nextDown: 16 or 17 digits, left to `description`). Every one is written as
    /// the former encoder wrote it; and each decimal of at most 15 digits in plain notation is found by
    /// ``ShortestDecimal`` itself, digits and decimals as spelt, not left to `description` (the m - 1 and m + 1
    /// candidates are what find those whose scaled product rounds to the next integer).
    func testDecimalsOfUpToFifteenDigitsInEveryAcceptedRangeAreWrittenAsBefore() {
        var random = SeededRandom(seed: 1517)
        let ranges: [(name: String, range: ClosedRange<Double>, signed: Bool)] = [
            ("lat", 0...90, true), ("lon", 0...180, true), ("heading", 0...359.999_999_999_999, false),
            ("accuracy", 0...10_000, false), ("speed", 0...300, false), ("small", 0...0.01, false),
            ("timestamp-sized", 1e12...1e13, false), ("large", 0...999_999_999_999_999, false),
        ]
        var mismatches = 0, unfound = 0, checked = 0
        func check(_ value: Double, _ label: String) {
            guard written(value) != Oracle.number(value) else { return }
            mismatches += 1
            if mismatches <= 10 { XCTFail("\(label): \(value) (bits \(value.bitPattern)): \(written(value)) != \(Oracle.number(value))") }
        }
        for (name, range, signed) in ranges {
            var sampled = 0
            while sampled < 6_000 {
                let digits = Int(random.next() % 15) + 1
                let low = (1..<digits).reduce(UInt64(1)) { power, _ in power * 10 }
                let decimal = Decimal(
                    mantissa: low + random.next() % (low * 9), places: Int(random.next() % 23),
                    negative: signed && random.next() % 2 == 0)
                let value = Double(decimal.text)!
                guard range.contains(value.magnitude) else { continue }
                sampled += 1
                check(value, "\(name) \(decimal.text)")
                check(value.nextUp, "\(name) \(decimal.text).nextUp")
                check(value.nextDown, "\(name) \(decimal.text).nextDown")
                guard value.magnitude >= 1e-4, value.magnitude < 1e15 else { continue }
                checked += 1
                let found = ShortestDecimal.digits(of: value.magnitude)
                if found?.mantissa != decimal.trimmed.mantissa || found?.fractionDigits != decimal.trimmed.fractionDigits {
                    unfound += 1
                    if unfound <= 10 { XCTFail("\(name) \(decimal.text): found \(String(describing: found))") }
                }
            }
        }
        XCTAssertEqual(mismatches, 0)
        XCTAssertEqual(unfound, 0)
        XCTAssertGreaterThan(checked, 15_000, "the sample reaches the fast path")
    }

    /// Values whose shortest decimal needs more than 15 digits, or exponents, or is a zero: ``ShortestDecimal``
    /// answers none of them, and the writer still writes `description`'s bytes.
    func testValuesOutsideTheFastPathAreLeftToDescription() {
        let longer: [Double] = [
            0.1 + 0.2, 1.0 / 3, 2.0 / 3, .pi, 0.1.nextUp, 52.520008.nextDown, 89.99999999999999, 123_456_789.012_345_67,
            999_999_999_999_999.9, 1e15, 1e15.nextDown, 9_007_199_254_740_992, 1e-4.nextDown, 9.9999e-5, 1e-5, 1e16, 1e300,
            .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        for value in longer {
            XCTAssertNil(ShortestDecimal.digits(of: value), "\(value)")
            XCTAssertEqual(written(value), Oracle.number(value), "\(value)")
            XCTAssertEqual(written(-value), Oracle.number(-value), "\(-value)")
        }
        XCTAssertEqual(written(0.1 + 0.2), "0.30000000000000004")
        XCTAssertEqual(written(9.9999e-5), "9.9999e-05")
        XCTAssertEqual(written(0), "0")
        XCTAssertEqual(written(-0.0), "-0")
        // The edges of the fast path, on the plain-notation side: 1e-4 itself and the largest 15-digit numbers.
        XCTAssertEqual(written(1e-4), "0.0001")
        XCTAssertEqual(written(-0.000_123_456_789_012_345), "-0.000123456789012345")
        XCTAssertEqual(written(999_999_999_999_999), "999999999999999")
        XCTAssertEqual(written(99_999_999_999_999.9), "99999999999999.9")
        XCTAssertEqual(written(52.520008), "52.520008")
        XCTAssertEqual(written(-179.5), "-179.5")
        XCTAssertEqual(written(1_763_757_670_123), "1763757670123")
    }

    func testIntegersAreWrittenAsStringWritesThem() {
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 1_763_757_670_123, 9_999_999_999_999, .max, .min, .max - 1, .min + 1]
        var random = SeededRandom(seed: 1717)
        for _ in 0..<20_000 {
            values.append(Int64(bitPattern: random.next()))
            values.append(Int64(bitPattern: random.next()) >> (random.next() % 64))
        }
        for power in 0..<19 {
            let tens = (0..<power).reduce(Int64(1)) { scaled, _ in scaled * 10 }
            values += [tens, tens - 1, -tens, 1 - tens]
        }
        for value in values { XCTAssertEqual(writtenInteger(value), String(value)) }
    }

    /// Whole frames, with channels that need every escape and with every optional field present or absent.
    func testWholeFramesAreByteIdenticalToTheOracle() {
        var random = SeededRandom(seed: 4242)
        let channels = [
            "vol@example.org", "", "v@x", "bench-volunteer-1@bench-abc.example", #"odd"name\slash/@x.org"#,
            "tab\there\nnew\r\u{8}\u{C}\u{0}\u{1F}\u{7F}é漢字🙂", String(repeating: "long-channel-name.", count: 20) + "@x.org",
            "\"", "\\", "\u{1}",
        ]
        for round in 0..<5_000 {
            func maybe(_ range: ClosedRange<Double>) -> Double? { random.next() % 3 == 0 ? nil : random.uniform(range) }
            let position = Position(
                lat: random.uniform(-90...90), lon: random.uniform(-180...180), accuracy: maybe(0...5_000),
                speed: maybe(0...100), heading: maybe(0...359.9999), timestamp: Int64(random.next() % 9_000_000_000_000_000))
            let channel = channels[round % channels.count]
            let seq = Int64(bitPattern: random.next())
            XCTAssertEqual(
                PositionFrameEncoder.encode(channel: channel, seq: seq, position: position),
                Oracle.encode(channel: channel, seq: seq, position: position), "\(channel) \(position)")
            // The same frame in a temporary buffer, as the hub encodes it before framing it.
            XCTAssertEqual(
                PositionFrameEncoder.withEncoded(channel: channel, seq: seq, position: position) { Array($0) },
                Oracle.encode(channel: channel, seq: seq, position: position), "\(channel) \(position)")
            // The position object alone, appended after bytes already there (as the load client writes its publishes).
            var appended = Array(channel.utf8), expected = Array(channel.utf8)
            PositionFrameEncoder.appendPosition(&appended, position)
            Oracle.appendPosition(&expected, position)
            XCTAssertEqual(appended, expected)
        }
    }

    /// A channel name is checked for bytes to escape a word of eight bytes at a time, then its last bytes one by one:
    /// each byte JSON escapes, and the bytes either side of each, at every place in names of 1 to 40 bytes (in the
    /// first word, a later one, or the tail) is escaped exactly as the oracle escapes it, and the others are not.
    func testEachByteToEscapeIsFoundWhereverItStandsInTheChannel() {
        let position = Position(lat: 1.5, lon: -2.25, accuracy: nil, speed: nil, heading: nil, timestamp: 1_763_757_670_123)
        let probes: [UInt8] = [0x00, 0x01, 0x09, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xC3]
        for length in 1...40 {
            for place in 0..<length {
                for probe in probes {
                    var bytes = Array(repeating: UInt8(ascii: "v"), count: length)
                    bytes[place] = probe
                    // Bytes from 0x80 on are not UTF-8 alone; the channel is a String, so they are decoded with repairs.
                    let channel = String(decoding: bytes, as: UTF8.self)
                    XCTAssertEqual(
                        PositionFrameEncoder.encode(channel: channel, seq: 7, position: position),
                        Oracle.encode(channel: channel, seq: 7, position: position), "byte \(probe) at \(place) of \(length)")
                }
            }
        }
    }
}
