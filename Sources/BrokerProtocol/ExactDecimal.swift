/// Reads a plain decimal (`-?digits(.digits)?`, no exponent) to the nearest Double without `strtod`, when one
/// IEEE operation gives that nearest Double exactly (Clinger's fast path), and answers `nil` otherwise.
///
/// A mantissa of at most 2^53 is exact as a Double, and so is every power of ten up to 10^22. The decimal's
/// value is then `mantissa / 10^k` (k the digits after the point), and IEEE division rounds that quotient of two
/// exact operands correctly: the very Double `strtod` would give. Longer mantissas, and more than 22 digits after
/// the point, are left to `strtod` (`nil`). ProtocolTests' `ExactDecimalTests` hold it to `Double(String)`.
enum ExactDecimal {
    /// 10^0 ... 10^22, each exactly representable.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    /// The value of `bytes`, a decimal the caller has checked against `-?[0-9]+(\.[0-9]+)?`, or `nil` when it
    /// needs more than one exact operation (then `strtod` decides).
    static func value(of bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let negative = !bytes.isEmpty && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        var inFraction = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ".") {
                inFraction = true
                continue
            }
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            if inFraction { fractionDigits += 1 }
            if mantissa == 0 && digit == 0 { continue }
            // 16 digits stay below 2^64; whether they fit 2^53 is checked at the end.
            significantDigits += 1
            guard significantDigits <= 16 else { return nil }
            mantissa = mantissa &* 10 &+ UInt64(digit)
        }
        guard mantissa <= 1 << 53, fractionDigits < powersOfTen.count else { return nil }
        let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }
}
