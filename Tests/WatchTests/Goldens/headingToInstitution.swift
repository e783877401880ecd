// The golden screen "headingToInstitution", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let headingToInstitution = #"""
         Donation d-1 · vol@example.org                                            live
        ─ Map ───────────────────────────────────────┬─ Status ─────────────────────────
                                                  N↑ │ On the way to the institution
           [I]                                       │
                                                     │ To        Caritas Palermo
                                                     │ Distance  2.2 km
                                                     │ Bearing   297° (NW)
                             ↖                       │ Speed     36 km/h
                               ·                     │ ETA       4 min
                                  ·  ·               │ Accuracy  ±8 m
                                        ·H           │ Last fix  3 s ago
                                          ··         │ Volunteer online
                                           ·         │
                                            ·        │
                                             ··      │
                                               ·     │
                                                ·    │ H home  I institution  · trail
         ├───────┤ 1 km                              │ ↖ volunteer  [ ] destination
        ─ Events ────────────────────────────────────┴──────────────────────────────────
         22:00:00  Watching donation d-1: On the way to your home
         22:02:21  The volunteer has arrived at your home (80 m away)
         22:03:25  Tracking paused: Picked up — waiting for your confirmation
         22:04:00  Tracking resumed: On the way to the institution

        """#
}
