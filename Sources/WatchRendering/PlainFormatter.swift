/// Plain mode: one line per event, for logs and scripts.
///
/// Every line is `<ISO-8601 UTC time> <kind> key=value ...`, and for events also ` -- <sentence>`:
///
///     2026-11-21T22:00:00Z position seq=42 lat=-34.6125 lon=-58.3801 distance=1.2 km bearing=183° (S) speed=28 km/h eta=3 min accuracy=5 m age=2 s
///     2026-11-21T22:03:10Z arrival place=home distance=85 m -- The volunteer has arrived at your home (85 m away)
public struct PlainFormatter: Sendable {
    /// Spell everything in ASCII.
    public var ascii: Bool

    public init(ascii: Bool = false) {
        self.ascii = ascii
    }

    /// The lines for what one reducer call changed: its log entries, then the new position if there is one.
    public func lines(for update: WatchUpdate, state: WatchState, now: Int64) -> [String] {
        var lines = update.entries.map(line(for:))
        if let seq = update.position {
            lines.append(positionLine(WatchViewModel(state: state, now: now), seq: seq, state: state, now: now))
        }
        return lines
    }

    /// `2026-11-21T22:03:10Z arrival place=home distance=85 m -- The volunteer has arrived at your home (85 m away)`.
    public func line(for entry: WatchLogEntry) -> String {
        var line = "\(WatchFormat.iso8601(entry.at)) \(entry.kind.rawValue)"
        for field in entry.fields { line += " \(field.key)=\(field.value)" }
        line += " -- \(entry.text)"
        return fold(TerminalText.sanitized(line))
    }

    /// `2026-11-21T22:00:00Z position seq=42 lat=… lon=… distance=1.2 km bearing=183° (S) speed=28 km/h eta=3 min accuracy=5 m age=2 s`.
    public func positionLine(_ model: WatchViewModel, seq: Int64, state: WatchState, now: Int64) -> String {
        let dash = "-"
        var line = "\(WatchFormat.iso8601(now)) position seq=\(seq)"
        if let position = state.fix?.position {
            line += " lat=\(Self.coordinate(position.lat)) lon=\(Self.coordinate(position.lon))"
        }
        line += " distance=\(model.distanceMetres.map(WatchFormat.distance) ?? dash)"
        line += " bearing=\(model.bearingDegrees.map(WatchFormat.bearing) ?? dash)"
        line += " speed=\(state.fix?.speed.map(WatchFormat.speed) ?? dash)"
        line += " eta=\(model.etaSeconds.map(WatchFormat.eta) ?? (model.eta == "arrived" ? "arrived" : dash))"
        line += " accuracy=\(state.fix?.position.accuracy.map(WatchFormat.distance) ?? dash)"
        line += " age=\(model.ageSeconds.map(WatchFormat.age) ?? dash)"
        if model.stale { line += " STALE" }
        return fold(line)
    }

    /// Degrees to 5 decimals (about a metre), without trailing zeros.
    static func coordinate(_ degrees: Double) -> String {
        guard degrees.isFinite else { return "-" }
        let rounded = (degrees * 100_000).rounded() / 100_000
        return "\(rounded)"
    }

    private func fold(_ text: String) -> String {
        ascii ? TerminalText.ascii(text) : text
    }
}
