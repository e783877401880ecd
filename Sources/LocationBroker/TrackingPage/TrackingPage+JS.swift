extension TrackingPage {
    /// The page's script: the donor's side of docs/PROTOCOL.md in a browser. It mirrors tracker-watch
    /// (WatchRendering): the same words, formats, staleness rule, speed smoothing, backoff, and recovery with
    /// `since`. The map is Leaflet's (when the broker serves it: `L`); every fact is also text. Text goes into
    /// the page only through `textContent` (and Leaflet only gets elements or escaped text).
    ///
    /// It is one function in the browser, kept here in parts by what they do, joined in order: the state
    /// (``scriptState``), the connection (``scriptConnection``), rendering (``scriptRendering``), the map
    /// (``scriptMap``) and the start below.
    static let script = [scriptState, scriptConnection, scriptRendering, scriptMap, scriptStart].joined(separator: "\n")

    /// The end of ``script``: the clock that re-renders, quick retries when the network comes back, and the start.
    static let scriptStart = #"""
          // ---- Start ----
          function tick() {
            if (st.ended) return;
            const now = Date.now();
            if (!st.staleAnnounced && isStale(now)) {
              st.staleAnnounced = true;
              record('stale', 'No new location for ' + fmt.age((now - st.fix.position.timestamp) / 1000) + ': the position shown is STALE');
            }
            render();
          }

          function retryNow() {
            if (retryTimer !== null && !st.ended) {
              clearTimeout(retryTimer);
              connect();
            }
          }

          if (!token) {
            end({ title: 'Tracking is not available', headline: 'This link is incomplete',
              summary: 'The address has no token after #token=. Open the tracking link exactly as the app gave it.' });
            return;
          }
          window.addEventListener('online', retryNow);
          document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible') retryNow(); });
          ticker = setInterval(tick, 1000);
          render();
          connect();
        })();
        """#
}
