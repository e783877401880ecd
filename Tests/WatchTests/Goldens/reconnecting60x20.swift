// The golden screen "reconnecting60x20", rendered without colour. Written by GoldenScreenTests when run with
// WATCH_RECORD_GOLDENS=1: review the diff before committing it.
extension GoldenScreens {
    static let reconnecting60x20 = #"""
         Donation d-1 · vol@example.org reconnecting in 4 s (try 3)
         On the way to your home
         No connection: connection refused. Reconnecting…
         600 m · 330° (NW) · ETA 2 min · 30 km/h
         Fix 4 s ago · ±5 m · volunteer online
        ─ Map ──────────────────────────────────────────────────────
                                                                 N↑
                            I



                                           [H]
                                             ↖
                                              ·
                                               ·
         ├────────┤ 2 km
        ─ Events ───────────────────────────────────────────────────
         22:00:00  Watching donation d-1: On the way to your home
         22:01:44  Connection lost: the broker went away (1001); re…

        """#
}
