// The golden screen "delivered", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let delivered = #"""
         Donation d-1 · vol@example.org                                           ended
        ─ Map ───────────────────────────────────────┬─ Status ─────────────────────────
                                                  N↑ │ Delivered to the institution
            I                                        │ Delivered to Caritas Palermo.
                                                     │ Thank you!
                                                     │
                                                     │ Distance  —
                             ↖                       │ Bearing   —
                               ·                     │ Speed     36 km/h
                                  ·  ·               │ ETA       —
                                        ·H           │ Accuracy  ±8 m
                                          ··         │ Last fix  7 min ago
                                           ·         │ Volunteer online
                                            ·        │
                                             ··      │
                                               ·     │
                                                ·    │ H home  I institution  · trail
         ├───────┤ 1 km                              │ ↖ volunteer  [ ] destination
        ─ Events ────────────────────────────────────┴──────────────────────────────────
         22:02:21  The volunteer has arrived at your home (80 m away)
         22:03:25  Tracking paused: Picked up — waiting for your confirmation
         22:04:00  Tracking resumed: On the way to the institution
         22:10:42  The volunteer has arrived at Caritas Palermo (40 m away)
         22:12:42  Delivered to Caritas Palermo. Thank you!
        """#
}
