/// Finds the digits `Double.description` prints for a double, without its general algorithm, when a decimal of
/// at most 15 significant digits reads back as that double; answers `nil` otherwise (then `description` decides).
///
/// Why the answer is `description`'s digits: `description` prints the shortest decimal that reads back as the
/// double. Distinct decimals of at most 15 significant digits read back as distinct doubles (DBL_DIG is 15), so
/// when one of at most 15 digits reads back as `d`, it is the only one that short, and the shortest is it.
///
/// How a decimal is proved to read back: for p = 0, 1, 2, ... decimal places, m = d * 10^p rounded. m < 10^15
/// < 2^53 is exact as a Double, and so is 10^p up to 10^22, so `m / 10^p` is one correctly rounded IEEE division
/// of two exact values: the very Double the decimal m * 10^-p reads back as. Equal to `d`, the decimal is `d`'s.
///
/// Why no decimal is missed: if M * 10^-p (M < 10^15) reads back as `d`, `d` is within a relative 2^-53 of it,
/// so d * 10^p is within 10^15 * 2^-53 < 0.12 of M, and its rounded product within 0.24: it rounds to M itself,
/// and the first p that reads back is M's own, with no trailing zero after the point (M / 10 was tried before).
///
/// Only magnitudes from 1e-4 (inclusive) to 1e15 (exclusive) are answered: `description` writes plain decimal
/// notation from 1e-4 up to 2^53 and exponents outside (SwiftDtoa: a decimal exponent below -3, or above 2^53),
/// and below 1e15 a whole part has at most 15 digits. ProtocolTests' `PositionFrameEncoderTests` hold the
/// bytes to `description`'s.
enum ShortestDecimal {
    /// The first mantissa with 16 digits.
    private static let sixteenDigits = 1e15
    /// A magnitude of at least 1e-4 with at most 15 significant digits has at most 4 + 15 decimals.
    private static let mostPlaces = 19

    /// The decimal `mantissa * 10^-fractionDigits` that `description` prints for `magnitude` (positive, finite),
    /// with no trailing zero after the point, or `nil` when it is not one of at most 15 digits in plain notation.
    static func digits(of magnitude: Double) -> (mantissa: UInt64, fractionDigits: Int)? {
        guard magnitude >= 1e-4, magnitude < sixteenDigits else { return nil }
        // 10^places, exact: each power of ten up to 10^22 is a Double, and so is its product by 10.
        var scale = 1.0
        for places in 0...mostPlaces {
            // Rounded by truncating: the sum is exact below 2^52, and no call to libm's `round` is made.
            let halfUp = magnitude * scale + 0.5
            // Every later place count only makes the mantissa longer.
            guard halfUp < sixteenDigits else { return nil }
            let mantissa = UInt64(halfUp)
            if Double(mantissa) / scale == magnitude { return (mantissa, places) }
            scale *= 10
        }
        return nil
    }
}
