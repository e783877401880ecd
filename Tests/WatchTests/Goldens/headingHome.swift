// The golden screen "headingHome", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let headingHome = #"""
         Donation d-1 · vol@example.org                                            live
        ─ Map ───────────────────────────────────────┬─ Status ─────────────────────────
                                                  N↑ │ On the way to your home
            I                                        │
                                                     │ To        Your home, Av.
                                                     │           Corrientes 1234
                                                     │ Distance  600 m
                                                     │ Bearing   330° (NW)
                                                     │ Speed     30 km/h
                                                     │ ETA       2 min
                                        [H]          │ Accuracy  ±5 m
                                                     │ Last fix  4 s ago
                                            ↖        │ Volunteer online
                                             ·       │
                                             ·       │
                                              ··     │
                                                ·    │ H home  I institution  · trail
         ├───────┤ 1 km                              │ ↖ volunteer  [ ] destination
        ─ Events ────────────────────────────────────┴──────────────────────────────────
         22:00:00  Watching donation d-1: On the way to your home




        """#
}
