// The golden screen "paused", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let paused = #"""
         Donation d-1 · vol@example.org                                            live
        ─ Map ───────────────────────────────────────┬─ Status ─────────────────────────
                                                  N↑ │ Picked up — waiting for your
            I                                        │ confirmation (paused)
                                                     │ Location sharing is paused until
                                                     │ the trip goes on.
                                                     │
                                                     │ To        — (paused)
                                                     │ Distance  —
                                                     │ Bearing   —
                                         H           │ Speed     30 km/h
                                          ↖·         │ ETA       —
                                           ·         │ Accuracy  ±5 m
                                            ·        │ Last fix  1 min ago
                                             ··      │ Volunteer online
                                               ·     │
                                                ·    │ H home  I institution  · trail
         ├───────┤ 1 km                              │ ↖ volunteer  [ ] destination
        ─ Events ────────────────────────────────────┴──────────────────────────────────
         22:00:00  Watching donation d-1: On the way to your home
         22:02:21  The volunteer has arrived at your home (80 m away)
         22:03:25  Tracking paused: Picked up — waiting for your confirmation


        """#
}
