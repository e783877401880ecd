// ---- The connection: the JavaScript client's DonationWatcher (clients/javascript/location-broker-client.js) ----
// It reconnects by BrokerClient's rules (full jitter, close codes, a silent path left within two heartbeats),
// subscribes again with `since` and drops positions already seen; this file turns its events into the page's
// state and log. The numbers are the broker's (DonorViewRules), declared before these files.
let ticker = null;

const watcher = new DonationWatcher({
  url: (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + '/v1/ws',
  donation: donationId,
  // A watch link's token cannot be renewed here: a refused one ends the page (HTTP 401 twice: 'unauthorized').
  token: () => token,
  backoffInitialMs: BACKOFF_INITIAL_S * 1000,
  backoffCapMs: BACKOFF_CAP_S * 1000,
  backoffPatienceMs: BACKOFF_PATIENCE_S * 1000,
  subscribeTimeoutMs: SUBSCRIBE_TIMEOUT_MS,
  notTrackableRetryMs: NOT_TRACKABLE_RETRY_MS,
  staleAfterMs: STALE_AFTER_MS,
});

watcher.on('connection', (change) => {
  switch (change.kind) {
    case 'connected':
      st.connection = { kind: 'live' };
      break;
    case 'reconnected':
      st.subscriptions += 1;
      st.connection = { kind: 'live' };
      record('reconnect', change.since !== null
        ? 'Reconnected; asking for the positions missed while disconnected'
        : 'Reconnected; subscribing again');
      record('resubscribed', 'Subscribed again: ' + status(change.state, change.tracking, null));
      break;
    case 'reconnecting':
      if (st.connection.kind === 'live' || st.connection.kind === 'paused') {
        record('connection', 'Connection lost: ' + change.reason + '; reconnecting');
      }
      st.connection = { kind: 'retrying', attempt: change.attempt, at: change.at, reason: change.reason };
      break;
    default:
      break; // 'connecting' is where the page starts; it reports no 'offline' to the watcher
  }
  render();
});
watcher.on('subscribed', (facts) => { applySubscribed(facts); render(); });
watcher.on('position', ({ seq, position }) => { take(seq, position); render(); });
watcher.on('paused', ({ state }) => { applyState(state, false, null); render(); });
watcher.on('resumed', ({ state, destination }) => { applyState(state, true, destination); render(); });
watcher.on('state', ({ state, tracking, destination }) => { applyState(state, tracking, destination); render(); });
watcher.on('presence', ({ online, lastSeen }) => { applyPresence(online, lastSeen); render(); });
watcher.on('arrival', (arrival) => { applyArrival(arrival); render(); });
watcher.on('stale', ({ lastFix }) => {
  st.staleAnnounced = true;
  record('stale', 'No new location for ' + fmt.age((Date.now() - lastFix) / 1000) + ': the position shown is STALE');
  render();
});
watcher.on('not-trackable', ({ message, retryAt }) => {
  // The trip has not started (CREATED): the watcher asks again now and then.
  const first = st.connection.kind !== 'paused';
  st.connection = { kind: 'paused', at: retryAt };
  st.tracking = false;
  st.destination = null;
  if (first) record('pause', 'Tracking paused: ' + message + '; asking again regularly');
  render();
});
watcher.on('ended', (how) => {
  switch (how.kind) {
    case 'unsubscribed':
      if (how.reason === 'DELIVERED') st.donationState = 'DELIVERED';
      if (how.reason === 'CANCELLED') st.donationState = 'CANCELLED';
      end(unsubscribedEnd(how.reason));
      break;
    case 'refused':
      end({ title: 'Tracking is not available', headline: 'Not allowed to watch', summary: how.code === 'not-found'
        ? 'There is nothing to track for donation ' + donationId + ': it may have been delivered or cancelled already, ' +
          'or this link belongs to another account.'
        : 'The broker refused to let you watch (' + how.code + '): ' + how.message });
      break;
    case 'refusedAfterReconnect':
      end({ headline: 'Tracking ended while disconnected',
        summary: 'After reconnecting, the broker no longer lets you watch (' + how.code + '): ' + how.message +
          '. The donation may have ended while the connection was down.' });
      break;
    case 'unauthorized':
      end({ title: 'Tracking is not available', headline: 'This link no longer works',
        summary: 'The broker did not accept the token in this link: ' + how.message +
          '. Open the tracking link from the app again to get a fresh one.' });
      break;
    case 'connectionFailed':
      end({ headline: 'Tracking stopped', summary: 'The broker cannot be used from here: ' + how.message + '.' });
      break;
    default:
      break; // 'stopped': the page closed the watcher itself, in end()
  }
});
