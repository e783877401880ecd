// The golden screen "arrived", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let arrived = #"""
         Donation d-1 · vol@example.org                                            live
        ─ Map ───────────────────────────────────────┬─ Status ─────────────────────────
                                                  N↑ │ Arrived at your home
            I                                        │
                                                     │ To        Your home, Av.
                                                     │           Corrientes 1234
                                                     │ Distance  80 m
                                                     │ Bearing   330° (NW)
                                                     │ Speed     30 km/h
                                                     │ ETA       arrived
                                        [H]          │ Accuracy  ±5 m
                                          ↖·         │ Last fix  5 s ago
                                           ·         │ Volunteer online
                                            ·        │
                                             ··      │
                                               ·     │
                                                ·    │ H home  I institution  · trail
         ├───────┤ 1 km                              │ ↖ volunteer  [ ] destination
        ─ Events ────────────────────────────────────┴──────────────────────────────────
         22:00:00  Watching donation d-1: On the way to your home
         22:02:21  The volunteer has arrived at your home (80 m away)



        """#
}
