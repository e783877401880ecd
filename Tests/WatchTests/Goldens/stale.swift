// The golden screen "stale", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let stale = #"""
         Donation d-1 · vol@example.org                                            live
        ─ Map ───────────────────────────────────────┬─ Status ─────────────────────────
                                                  N↑ │ On the way to your home
            I                                        │ No new location for 1 min: the
                                                     │ position shown is STALE.
                                                     │
                                                     │ To        Your home, Av.
                                                     │           Corrientes 1234
                                                     │ Distance  600 m
                                                     │ Bearing   330° (NW)
                                        [H]          │ Speed     30 km/h
                                                     │ ETA       2 min
                                            ↖        │ Accuracy  ±5 m
                                             ·       │ Last fix  1 min ago STALE
                                             ·       │ Volunteer online
                                              ··     │
                                                ·    │ H home  I institution  · trail
         ├───────┤ 1 km                              │ ↖ volunteer  [ ] destination
        ─ Events ────────────────────────────────────┴──────────────────────────────────
         22:00:00  Watching donation d-1: On the way to your home
         22:03:15  No new location for 1 min: the position shown is STALE



        """#
}
