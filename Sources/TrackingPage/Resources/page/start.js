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
