// The golden screen "waiting", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let waiting = #"""
         Donation d-1 · vol@example.org                                            live
        ─ Map ───────────────────────────────────────┬─ Status ─────────────────────────
                                                  N↑ │ On the way to your home
                                                     │ Waiting for the volunteer's
          I                                          │ location…
                                                     │
                                                     │ To        Your home, Av.
                                                     │           Corrientes 1234
                                                     │ Distance  —
                                                     │ Bearing   —
                                                     │ Speed     —
                                                     │ ETA       —
                                                     │ Accuracy  —
                                                     │ Last fix  —
                                                     │ Volunteer offline
                                                 [H] │
                                                     │ H home  I institution  · trail
         ├──────────┤ 1 km                           │ ● volunteer  [ ] destination
        ─ Events ────────────────────────────────────┴──────────────────────────────────
         22:00:00  Watching donation d-1: On the way to your home




        """#
}
