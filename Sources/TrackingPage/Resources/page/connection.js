// ---- The connection (tracker-watch's WatchSession) ----
let socket = null;
let pending = null;
let requests = 0;
let failures = 0;
let subscribedOnce = false;
let subscribeTimer = null;
let retryTimer = null;
let pauseTimer = null;
let ticker = null;

function clearTimers() {
  clearTimeout(subscribeTimer);
  clearTimeout(retryTimer);
  clearTimeout(pauseTimer);
  clearInterval(ticker);
  subscribeTimer = retryTimer = pauseTimer = null;
}

function socketURL() {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return scheme + '//' + location.host + '/v1/ws?token=' + encodeURIComponent(token);
}

function connect() {
  retryTimer = null;
  if (st.ended) return;
  if (st.connection.kind !== 'retrying') st.connection = { kind: 'connecting' };
  let opened = false;
  let ws;
  try {
    ws = new WebSocket(socketURL());
  } catch (error) {
    lost('the browser could not open a WebSocket');
    return;
  }
  socket = ws;
  ws.addEventListener('open', () => {
    if (socket !== ws) return;
    opened = true;
    if (subscribedOnce) {
      st.resubscribeSince = st.highestSeq;
      record('reconnect', st.highestSeq !== null
        ? 'Reconnected; asking for the positions missed while disconnected'
        : 'Reconnected; subscribing again');
    }
    subscribe();
    render();
  });
  ws.addEventListener('message', (event) => {
    if (socket !== ws || typeof event.data !== 'string') return;
    let frame;
    try { frame = JSON.parse(event.data); } catch (error) { return; }
    if (frame && typeof frame === 'object') handle(frame);
    render();
  });
  ws.addEventListener('close', (event) => {
    if (socket !== ws) return;
    socket = null;
    pending = null;
    clearTimeout(subscribeTimer);
    clearTimeout(pauseTimer);
    if (st.ended) return;
    if (opened) lost(describeClose(event.code, event.reason), event.code);
    else diagnose();
  });
}

function send(frame) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
}

function subscribe() {
  requests += 1;
  pending = 's' + requests;
  const frame = { type: 'subscribe', id: pending, donation: donationId };
  if (st.highestSeq !== null) frame.since = st.highestSeq;
  send(frame);
  clearTimeout(subscribeTimer);
  subscribeTimer = setTimeout(() => drop('no answer to subscribe within ' + SUBSCRIBE_TIMEOUT_MS / 1000 + ' s'), SUBSCRIBE_TIMEOUT_MS);
}

// Gives up on the current socket and reconnects.
function drop(reason) {
  if (!socket) return;
  const ws = socket;
  socket = null;
  pending = null;
  ws.close(1000);
  lost(reason);
}

// The rules of the Swift library's ConnectionStateMachine: full jitter (a delay drawn from zero up to
// BACKOFF_INITIAL_S doubling per failure, capped at BACKOFF_CAP_S), and at least BACKOFF_PATIENCE_S after too
// many connections (4029, HTTP 429) or too many refused frames (4009), which hurrying back cannot cure.
function lost(reason, code) {
  if (st.ended) return;
  clearTimeout(subscribeTimer);
  clearTimeout(pauseTimer);
  const wasLive = st.connection.kind === 'live' || st.connection.kind === 'paused';
  if (wasLive) record('connection', 'Connection lost: ' + reason + '; reconnecting');
  failures += 1;
  const ceiling = Math.min(BACKOFF_CAP_S, BACKOFF_INITIAL_S * 2 ** Math.min(failures - 1, 30));
  const minimum = code === 4029 || code === 4009 ? BACKOFF_PATIENCE_S : 0;
  const delay = Math.max(minimum, ceiling * Math.random()) * 1000;
  st.connection = { kind: 'retrying', attempt: failures, at: Date.now() + delay, reason };
  clearTimeout(retryTimer);
  retryTimer = setTimeout(connect, delay);
  render();
}

// The browser hides why an upgrade failed: ask the same URL over plain HTTP, which says.
async function diagnose() {
  let reason = 'the broker cannot be reached';
  let status = 0;
  try {
    const response = await fetch('/v1/ws?token=' + encodeURIComponent(token), { cache: 'no-store', credentials: 'omit' });
    let body = null;
    try { body = await response.json(); } catch (error) { body = null; }
    const message = body && body.error && typeof body.error.message === 'string' ? body.error.message : null;
    if (response.status === 401) {
      end({ title: 'Tracking is not available', headline: 'This link no longer works',
        summary: 'The broker did not accept the token in this link: ' + (message || 'it was refused') +
          '. Open the tracking link from the app again to get a fresh one.' });
      return;
    }
    if (response.status === 400) reason = 'the WebSocket could not be opened (a proxy may be in the way)';
    else if (message) reason = message;
    else reason = 'the broker answered ' + response.status;
    status = response.status;
  } catch (error) {
    reason = 'the broker cannot be reached';
  }
  lost(reason, status === 429 ? 4029 : undefined);
}

function describeClose(code, reason) {
  switch (code) {
    case 4001: return 'the token expired (4001)';
    case 4008: return 'the connection fell behind (4008)';
    case 1001: return (reason || 'the broker went away') + ' (1001)';
    case 1005: case 1006: return reason || 'the connection dropped';
    default: return reason ? reason + ' (' + code + ')' : 'closed with code ' + code;
  }
}

function refused(error) {
  const code = String(error.code);
  const message = typeof error.message === 'string' ? error.message : '';
  if (code === 'not-trackable') {
    const first = st.connection.kind !== 'paused';
    st.connection = { kind: 'paused', at: Date.now() + NOT_TRACKABLE_RETRY_MS };
    st.tracking = false;
    st.destination = null;
    if (first) record('pause', 'Tracking paused: ' + message + '; asking again regularly');
    clearTimeout(pauseTimer);
    pauseTimer = setTimeout(() => { if (socket && !st.ended) subscribe(); }, NOT_TRACKABLE_RETRY_MS);
    return;
  }
  if (code === 'unavailable' || code === 'internal' || code === 'rate-limited') {
    drop('the broker could not subscribe now (' + code + '): ' + message);
    return;
  }
  if (!subscribedOnce) {
    const summary = code === 'not-found'
      ? 'There is nothing to track for donation ' + donationId + ': it may have been delivered or cancelled already, ' +
        'or this link belongs to another account.'
      : 'The broker refused to let you watch (' + code + '): ' + message;
    end({ title: 'Tracking is not available', headline: 'Not allowed to watch', summary });
  } else {
    end({ headline: 'Tracking ended while disconnected',
      summary: 'After reconnecting, the broker no longer lets you watch (' + code + '): ' + message +
        '. The donation may have ended while the connection was down.' });
  }
}

function handle(frame) {
  switch (frame.type) {
    case 'welcome':
      if (st.connection.kind === 'connecting' || st.connection.kind === 'retrying') st.connection = { kind: 'subscribing' };
      break;
    case 'subscribed':
      if (frame.re !== undefined && frame.re === pending) {
        pending = null;
        clearTimeout(subscribeTimer);
        clearTimeout(pauseTimer);
        subscribedOnce = true;
        failures = 0;
      }
      applySubscribed(frame);
      break;
    case 'error':
      if (frame.re !== undefined && frame.re === pending) {
        pending = null;
        clearTimeout(subscribeTimer);
        refused(frame);
      } else {
        record('error', 'The broker answered: ' + frame.message);
      }
      break;
    case 'position':
      if (ours(frame.channel)) take(frame.seq, frame.position);
      break;
    case 'state':
      if (ours(frame.channel, frame.donation)) applyState(frame.state, frame.tracking === true, frame.destination || null);
      break;
    case 'arrival':
      if (ours(frame.channel, frame.donation)) applyArrival(frame);
      break;
    case 'presence':
      if (ours(frame.channel)) applyPresence(frame.online === true, frame.lastSeen);
      break;
    case 'unsubscribed':
      if (!ours(frame.channel, frame.donation)) break;
      if (frame.reason === 'DELIVERED') st.donationState = 'DELIVERED';
      if (frame.reason === 'CANCELLED') st.donationState = 'CANCELLED';
      end(unsubscribedEnd(frame.reason));
      break;
    default:
      break; // a newer broker's frame: ignored
  }
}
