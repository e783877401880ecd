// The golden screen "tiny30x8", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let tiny30x8 = #"""
        On the way to your home
        600 m · 330° (NW)
        ETA 2 min · 30 km/h
        Fix 4 s ago
        Volunteer online
        22:00:00 Watching donation d-…
        Donation d-1 · vol@example.org
        Enlarge to 40x12 for the map
        """#
}
