// ---- Start ----
// Once a second: the age of the last location and the countdowns change on screen.
function tick() {
  if (!st.ended) render();
}

if (!token) {
  end({ title: 'Tracking is not available', headline: 'This link is incomplete',
    summary: 'The address has no token after #token=. Open the tracking link exactly as the app gave it.' });
  return;
}
// The phone back online, or the tab shown again: an attempt at once instead of at the end of the backoff.
window.addEventListener('online', () => watcher.networkAvailable());
document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible') watcher.appEnteredForeground(); });
ticker = setInterval(tick, 1000);
render();
watcher.start();
// Not awaited: the page tracks at once; the "Notify me" box appears if and when browser and broker both can.
offerNotifications();
