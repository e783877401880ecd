/// The words and numbers a donor reads: distances, speeds, durations, bearings and times.
///
/// Every function is pure and independent of the locale, so screens and log lines are the same on every machine.
public enum WatchFormat {
    /// What is shown when a value is unknown.
    public static let unknown = "—"

    /// A distance: `85 m` below 100 m, `850 m` (to 10 m) below 1 km, `1.2 km` below 10 km, then `12 km`.
    public static func distance(_ metres: Double) -> String {
        guard metres.isFinite, metres >= 0 else { return unknown }
        let rounded = metres < 100 ? metres.rounded() : (metres / 10).rounded() * 10
        if rounded < 1000 { return "\(Int(rounded)) m" }
        let tenths = (metres / 100).rounded()
        if tenths < 100 { return "\(Int(tenths) / 10).\(Int(tenths) % 10) km" }
        return "\(Int((metres / 1000).rounded())) km"
    }

    /// A speed given in metres per second, shown in whole km/h.
    public static func speed(_ metresPerSecond: Double) -> String {
        guard metresPerSecond.isFinite, metresPerSecond >= 0 else { return unknown }
        return "\(Int((metresPerSecond * 3.6).rounded())) km/h"
    }

    /// A time to go: `< 1 min`, `3 min` (rounded up), `1 h 05 min`.
    public static func eta(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return unknown }
        if seconds < 60 { return "< 1 min" }
        let minutes = Int((seconds / 60).rounded(.up))
        if minutes < 60 { return "\(minutes) min" }
        let rest = minutes % 60
        return "\(minutes / 60) h \(rest < 10 ? "0" : "")\(rest) min"
    }

    /// An elapsed time: `12 s`, `3 min`, `1 h 5 min`.
    public static func age(_ seconds: Int64) -> String {
        let seconds = max(0, seconds)
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        let minutes = (seconds % 3600) / 60
        return minutes == 0 ? "\(seconds / 3600) h" : "\(seconds / 3600) h \(minutes) min"
    }

    /// A short wait to one decimal: `0.6 s`, `12.0 s`.
    public static func seconds(_ milliseconds: Int64) -> String {
        let tenths = max(0, (milliseconds + 50) / 100)
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// The eight compass points, clockwise from north.
    public static let compassPoints = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]

    /// The index in ``compassPoints`` of the 45° sector that holds `degrees`.
    public static func compassIndex(_ degrees: Double) -> Int {
        guard degrees.isFinite else { return 0 }
        let normalised = degrees.truncatingRemainder(dividingBy: 360) + (degrees < 0 ? 360 : 0)
        return Int((normalised + 22.5) / 45) % 8
    }

    /// A bearing: `183° (S)`.
    public static func bearing(_ degrees: Double) -> String {
        guard degrees.isFinite else { return unknown }
        let whole = (Int(degrees.rounded()) % 360 + 360) % 360
        return "\(whole)° (\(compassPoints[compassIndex(degrees)]))"
    }

    /// A horizontal accuracy: `±5 m`.
    public static func accuracy(_ metres: Double) -> String {
        guard metres.isFinite, metres >= 0 else { return unknown }
        return "±" + distance(metres)
    }

    /// The time of day, `22:00:05`, at `utcOffsetSeconds` from UTC.
    public static func clock(_ milliseconds: Int64, utcOffsetSeconds: Int = 0) -> String {
        let seconds = floorDivide(milliseconds, 1000) + Int64(utcOffsetSeconds)
        let ofDay = seconds - floorDivide(seconds, 86_400) * 86_400
        return "\(twoDigits(ofDay / 3600)):\(twoDigits(ofDay % 3600 / 60)):\(twoDigits(ofDay % 60))"
    }

    /// An ISO-8601 UTC timestamp to the second: `2026-11-21T22:00:00Z`.
    public static func iso8601(_ milliseconds: Int64) -> String {
        let seconds = floorDivide(milliseconds, 1000)
        let days = floorDivide(seconds, 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let year4 = year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return "\(year4)-\(twoDigits(month))-\(twoDigits(day))T\(clock(milliseconds))Z"
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// Year, month and day of a day count since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    private static func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
