// location-broker-client: the donor's watcher and the volunteer's publisher for location-broker, in JavaScript,
// for browsers and React Native. No dependencies: any WebSocket implementation (the global one, or passed in),
// and `fetch` when there is one (to learn why an upgrade was refused). The rules are the Swift BrokerClient's
// (docs/CLIENTS.md): full-jitter backoff, dead-path detection, close codes mapped to retry, new token or stop,
// resubscribing with `since` and dropping seqs already seen, the newest fix kept until its ack.

/// The numbers the rules use. The donor-view numbers are BrokerProtocol's DonorViewRules (the tracking page passes
/// the broker's own; JavaScriptClientTests checks these against them).
export const DEFAULTS = Object.freeze({
  backoffInitialMs: 500,
  backoffCapMs: 15000,
  /// After 4029, 4009 or HTTP 429: hurrying back cannot help.
  backoffPatienceMs: 5000,
  /// The silence window before a `welcome` announced the broker's heartbeat.
  assumedHeartbeatMs: 10000,
  /// How long the socket may take to open, and then to send `welcome`.
  openTimeoutMs: 10000,
  subscribeTimeoutMs: 10000,
  notTrackableRetryMs: 15000,
  staleAfterMs: 60000,
  /// The least time between two attempts that the network's return or the app asks for.
  minimumAttemptGapMs: 2000,
  /// When the network comes back or the app comes to the foreground, a connection silent this long is replaced.
  silenceBeforeReplacingMs: 30000,
  /// A JWT whose `exp` is this close is renewed before connecting.
  tokenRenewalMarginMs: 60000,
  /// A fix not acknowledged within this means the path is dead.
  ackTimeoutMs: 10000,
  /// A fix kept while disconnected is dropped when older than this (the broker's max_position_age_seconds).
  maximumFixAgeMs: 600000,
  /// How long the diagnosis of a refused upgrade (a plain GET of the same address) may take.
  diagnoseTimeoutMs: 5000,
});

// ---------------------------------------------------------------- the reconnect rules

/// Why a connection ended: `{kind: 'closed', code, reason}` (code null: no close frame), `{kind: 'refused', status,
/// message}` (the upgrade's HTTP answer), `{kind: 'unreachable', reason}`, `{kind: 'dead', reason}`.
export const Ending = Object.freeze({
  closed: (code, reason) => ({ kind: 'closed', code: code === undefined ? null : code, reason: reason || '' }),
  refused: (status, message) => ({ kind: 'refused', status, message }),
  unreachable: (reason) => ({ kind: 'unreachable', reason }),
  dead: (reason) => ({ kind: 'dead', reason }),
});

/// The close codes that mean this client broke the protocol: the same client would do it again.
const PROTOCOL_VIOLATIONS = [1002, 1003, 1007, 1009, 1010];

/// What an ending calls for: 'retry' (after the backoff), 'renew' (a fresh token, then at once) or 'stop'.
/// 4001 and HTTP 401: renew. 1002, 1003, 1007, 1009, 1010, HTTP 400 and 404: stop. Everything else: retry.
export function verdict(ending) {
  if (ending.kind === 'closed') {
    if (ending.code === 4001) return 'renew';
    if (PROTOCOL_VIOLATIONS.indexOf(ending.code) >= 0) return 'stop';
    return 'retry';
  }
  if (ending.kind === 'refused') {
    if (ending.status === 401) return 'renew';
    if (ending.status === 400 || ending.status === 404) return 'stop';
    return 'retry';
  }
  return 'retry';
}

/// A short reason for an ending, for logs and screens.
export function describeEnding(ending) {
  switch (ending.kind) {
    case 'closed':
      switch (ending.code) {
        case 4001: return 'the token expired (4001)';
        case 4008: return 'the connection fell behind (4008)';
        case 4009: return 'too many refused frames (4009)';
        case 4029: return 'too many connections for this identity (4029)';
        case 1001: return (ending.reason || 'the broker went away') + ' (1001)';
        case null: case 1005: case 1006: return ending.reason || 'the connection dropped';
        default: return ending.reason ? ending.reason + ' (' + ending.code + ')' : 'closed with code ' + ending.code;
      }
    case 'refused': return 'the broker refused the connection (HTTP ' + ending.status + '): ' + ending.message;
    case 'unreachable': return 'cannot reach the broker: ' + ending.reason;
    default: return 'the connection is dead: ' + ending.reason;
  }
}

function patienceFor(ending) {
  return (ending.kind === 'closed' && (ending.code === 4029 || ending.code === 4009)) ||
    (ending.kind === 'refused' && ending.status === 429);
}

/// The upper bound of the jitter before retry `attempt` (1 for the first): `initialMs` doubling, capped at `capMs`.
export function backoffCeiling(attempt, initialMs, capMs) {
  return Math.min(capMs, initialMs * Math.pow(2, Math.min(Math.max(attempt, 1) - 1, 40)));
}

/// The reconnect state machine (Swift's ConnectionStateMachine): no I/O and no clock of its own; its owner reports
/// what happened and does what the returned action says: `{type: 'connect', renew}`, `{type: 'wait', delayMs,
/// attempt, reason}`, `{type: 'stop', reason, ending}` or `{type: 'none'}`.
export class ReconnectRules {
  constructor(numbers, random) {
    this.numbers = Object.assign({}, DEFAULTS, numbers || {});
    this.random = random || (() => Math.random());
    this.phase = 'idle';
    this.heartbeatMs = null;
    this.failures = 0;
    this.everConnected = false;
    this.renewalsWithoutSuccess = 0;
    this.lastAttempt = null;
  }

  /// The silence window: the heartbeat `welcome` announced, or the assumption before one.
  get keepaliveMs() { return this.heartbeatMs || this.numbers.assumedHeartbeatMs; }

  start() {
    if (this.phase !== 'idle') return { type: 'none' };
    this.phase = 'connecting';
    return { type: 'connect', renew: false };
  }

  opened() { if (this.phase === 'connecting') this.phase = 'open'; }

  /// `welcome` came: the connection counts as a success and the backoff starts over.
  welcomed(heartbeatSeconds) {
    if (this.phase !== 'open') return;
    if (heartbeatSeconds > 0) this.heartbeatMs = heartbeatSeconds * 1000;
    this.phase = 'welcomed';
    this.failures = 0;
    this.renewalsWithoutSuccess = 0;
    this.everConnected = true;
  }

  attempting(now) { this.lastAttempt = now; }

  ended(ending, now) {
    if (this.phase === 'stopped' || this.phase === 'idle') return { type: 'none' };
    const reason = describeEnding(ending);
    let what = verdict(ending);
    if (what === 'renew') {
      // A fresh token that is refused again will not get better by asking once more.
      this.renewalsWithoutSuccess += 1;
      if (this.renewalsWithoutSuccess > 1) what = ending.kind === 'refused' && ending.status === 401 ? 'stop' : 'retry';
    }
    if (what === 'stop') {
      this.phase = 'stopped';
      return { type: 'stop', reason, ending };
    }
    if (what === 'renew') {
      this.phase = 'connecting';
      return { type: 'connect', renew: true };
    }
    this.failures += 1;
    const delayMs = this.delay(this.failures, patienceFor(ending) ? this.numbers.backoffPatienceMs : 0);
    this.phase = 'waiting';
    this.waitUntil = now + delayMs;
    return { type: 'wait', delayMs, attempt: this.failures, reason };
  }

  delayElapsed() {
    if (this.phase !== 'waiting') return { type: 'none' };
    this.phase = 'connecting';
    return { type: 'connect', renew: false };
  }

  /// The network came back, the app came to the foreground or asked to reconnect: while waiting, the backoff
  /// starts over and an attempt follows at once, or when the minimum gap since the last attempt has passed.
  connectivityReturned(now) {
    if (this.phase !== 'waiting') return { type: 'none' };
    this.failures = 0;
    const gap = this.numbers.minimumAttemptGapMs;
    if (this.lastAttempt !== null && now < this.lastAttempt + gap) {
      const delayMs = this.lastAttempt + gap - now;
      this.waitUntil = now + delayMs;
      return { type: 'wait', delayMs, attempt: 1, reason: 'the network came back' };
    }
    this.phase = 'connecting';
    return { type: 'connect', renew: false };
  }

  stop() { this.phase = 'stopped'; }

  /// Full jitter: uniform in [0, ceiling), at least `minimumMs`, at most the cap (or the minimum, if larger).
  delay(attempt, minimumMs) {
    const n = this.numbers;
    const drawn = backoffCeiling(attempt, n.backoffInitialMs, n.backoffCapMs) * this.random();
    return Math.min(Math.max(drawn, minimumMs || 0), Math.max(n.backoffCapMs, minimumMs || 0));
  }
}

// ---------------------------------------------------------------- tokens

/// Decodes base64url without atob (absent from some React Native engines).
function base64UrlDecode(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let bits = 0, value = 0, out = '';
  for (const character of text) {
    const index = alphabet.indexOf(character);
    if (index < 0) return null;
    value = (value << 6) | index;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((value >> bits) & 0xff);
    }
  }
  return out;
}

/// The `exp` of a JWT in milliseconds, read without checking the signature (the broker checks it); null for a
/// token that is not a JWT with an `exp` (it is then renewed only when the broker refuses it).
export function tokenExpiry(token) {
  const parts = typeof token === 'string' ? token.split('.') : [];
  if (parts.length !== 3) return null;
  const json = base64UrlDecode(parts[1].replace(/=+$/, ''));
  if (json === null) return null;
  try {
    const claims = JSON.parse(json);
    return claims && typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : null;
  } catch (error) {
    return null;
  }
}

// ---------------------------------------------------------------- events

class Emitter {
  constructor() { this.listeners = {}; }

  /// Calls `listener(detail)` for every event of `type`; returns a function that stops it.
  on(type, listener) {
    const list = this.listeners[type] || (this.listeners[type] = []);
    list.push(listener);
    return () => {
      const index = list.indexOf(listener);
      if (index >= 0) list.splice(index, 1);
    };
  }

  emit(type, detail) {
    for (const listener of (this.listeners[type] || []).slice()) {
      try {
        listener(detail);
      } catch (error) {
        // The app's bug must not break the client's state: report it where unhandled errors go.
        Promise.reject(error);
      }
    }
  }
}

// ---------------------------------------------------------------- React Native's AppState and NetInfo

/// Follows React Native's `AppState` (passed in: the client does not depend on react-native) for `client`:
/// 'background' calls appEnteredBackground() when `pause` is true, 'active' calls appEnteredForeground(); 'inactive'
/// (iOS: the app switcher, a call coming in) and the others change nothing. Returns a function that stops following.
function followAppState(client, AppState, pause) {
  if (!AppState || typeof AppState.addEventListener !== 'function') {
    throw new TypeError("attachAppState: pass React Native's AppState (import { AppState } from 'react-native')");
  }
  const changed = (state) => {
    if (state === 'background' && pause) client.appEnteredBackground();
    else if (state === 'active') client.appEnteredForeground();
  };
  const subscription = AppState.addEventListener('change', changed);
  if (AppState.currentState === 'background') changed('background');
  return () => {
    if (subscription && typeof subscription.remove === 'function') subscription.remove();
    else if (typeof AppState.removeEventListener === 'function') AppState.removeEventListener('change', changed);
  };
}

/// Whether attachAppState's options (`{background: 'pause' | 'stay'}`, `byDefault` when left out) ask to pause.
function pausesInBackground(options, byDefault) {
  const background = options && options.background !== undefined ? options.background : byDefault;
  if (background !== 'pause' && background !== 'stay') throw new TypeError("attachAppState: background is 'pause' or 'stay'");
  return background === 'pause';
}

/// Follows `@react-native-community/netinfo` (passed in) for `client`: `isConnected` false calls networkLost(), true
/// calls networkAvailable() (also when the network changes, Wi-Fi to cellular: a connection left silent by the
/// change is replaced); null (not known yet) changes nothing. `isInternetReachable` is not followed: it comes from
/// polling a server that is not the broker. Returns a function that stops following.
function followNetInfo(client, NetInfo) {
  if (!NetInfo || typeof NetInfo.addEventListener !== 'function') {
    throw new TypeError("attachNetInfo: pass NetInfo (import NetInfo from '@react-native-community/netinfo')");
  }
  const unsubscribe = NetInfo.addEventListener((state) => {
    if (!state) return;
    if (state.isConnected === false) client.networkLost();
    else if (state.isConnected === true) client.networkAvailable();
  });
  return () => { if (typeof unsubscribe === 'function') unsubscribe(); };
}

/// The functions that stop following AppState and NetInfo; all of them run when the client stops.
class Attachments {
  constructor() { this.detachers = []; this.released = false; }

  add(detach) {
    if (this.released) {
      detach();
      return () => {};
    }
    this.detachers.push(detach);
    return () => {
      const index = this.detachers.indexOf(detach);
      if (index >= 0) this.detachers.splice(index, 1)[0]();
    };
  }

  releaseAll() {
    this.released = true;
    for (const detach of this.detachers.splice(0)) detach();
  }
}

// ---------------------------------------------------------------- positions

/// A fix as the broker takes it (docs/PROTOCOL.md, "The position object"), by the Swift client's rule (Position's
/// Core Location initialiser): `lat`, `lon` and `timestamp` as given; `accuracy`, `speed` and `heading` only when
/// they hold a measurement. Core Location (so React Native on iOS) says "invalid" with -1 and browsers with null: a
/// value that is negative, null, missing or not finite is left out, instead of a fix the broker refuses
/// (`invalid-position`), and a heading of 360 or more is taken modulo 360. Other fields (altitude...) are no part
/// of the protocol and are not sent.
export function brokerPosition(fix) {
  const position = { lat: fix.lat, lon: fix.lon };
  const accuracy = measured(fix.accuracy);
  const speed = measured(fix.speed);
  const heading = measured(fix.heading);
  if (accuracy !== null) position.accuracy = accuracy;
  if (speed !== null) position.speed = speed;
  if (heading !== null) position.heading = heading % 360;
  position.timestamp = fix.timestamp;
  return position;
}

function measured(value) {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/// A fix from what the Geolocation API (the browser's, or React Native's geolocation modules) hands over:
/// `{coords: {latitude, longitude, accuracy, speed, heading}, timestamp}`, absent values left out as above.
export function positionFromGeolocation(location) {
  const coords = location.coords;
  return brokerPosition({
    lat: coords.latitude, lon: coords.longitude, accuracy: coords.accuracy, speed: coords.speed, heading: coords.heading,
    timestamp: Math.round(location.timestamp),
  });
}

// ---------------------------------------------------------------- the link: one connection at a time, by the rules

function defaultTimers() {
  return {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (id) => clearTimeout(id),
    now: () => Date.now(),
  };
}

/// The HTTP address of a `ws(s)://` endpoint, or null.
function httpAddress(url) {
  const parts = /^ws(s?)(:.*)$/.exec(url);
  return parts ? 'http' + parts[1] + parts[2] : null;
}

/// Whether the token travels in an `Authorization` header rather than `?token=`. `tokenIn` 'header' or 'query'
/// decides; left out ('auto'), the header where the WebSocket is known to take one: React Native's, whose
/// constructor takes headers as a third argument. A browser's ignores that argument (the token would silently not
/// be sent), and node has no single WebSocket, so those use the query unless told otherwise.
function tokenGoesInHeader(tokenIn) {
  if (tokenIn === 'header') return true;
  if (tokenIn === 'query') return false;
  if (tokenIn !== undefined && tokenIn !== 'auto') throw new TypeError("tokenIn: 'auto' (the default), 'header' or 'query'");
  return isReactNative();
}

/// React Native says so in `navigator.product`.
function isReactNative() {
  return typeof navigator !== 'undefined' && navigator !== null && navigator.product === 'ReactNative';
}

function withToken(url, token) {
  return url + (url.indexOf('?') >= 0 ? '&' : '?') + 'token=' + encodeURIComponent(token);
}

/// Keeps one connection open by ReconnectRules, for an owner (the watcher or the publisher) that speaks the
/// protocol on it. The owner implements welcomed(), frame(frame), probe() (true when it sent a frame the broker
/// answers), disconnected(), stopped(reason, ending) and announce(change).
class Link {
  constructor(config, owner) {
    if (typeof config.url !== 'string') throw new TypeError('url: the broker\'s WebSocket address (wss://host/v1/ws) is required');
    if (typeof config.token !== 'function') throw new TypeError('token: a function that gives (or resolves to) a token is required');
    this.config = config;
    this.owner = owner;
    this.timers = config.timers || defaultTimers();
    this.rules = new ReconnectRules(config, config.random);
    this.numbers = this.rules.numbers;
    this.token = null;
    this.socket = null;
    this.welcomed = false;
    this.lastReceived = 0;
    this.probeAt = null;
    /// When the owner last had nothing to ask on a silent connection (the silence is measured from then).
    this.declinedAt = 0;
    this.offline = false;
    /// The app is in the background and asked for no connection meanwhile (attachAppState's 'pause').
    this.inBackground = false;
    /// The connect or wait held back while offline or in the background.
    this.parked = null;
    this.closed = false;
    this.tokenInHeader = tokenGoesInHeader(config.tokenIn);
    this.timer = { open: null, silence: null, wait: null };
    this.generation = 0;
  }

  get now() { return this.timers.now(); }

  start() {
    this.perform(this.rules.start());
  }

  /// Stops for good: no timer left running, the socket closed.
  close() {
    if (this.closed) return;
    this.closed = true;
    this.rules.stop();
    this.detach(true);
    this.clear('wait');
  }

  /// Sends a frame on the open connection; false when there is none.
  send(frame) {
    const socket = this.socket;
    if (!socket || !this.welcomed || socket.readyState !== 1) return false;
    try {
      socket.send(JSON.stringify(frame));
      return true;
    } catch (error) {
      return false;
    }
  }

  get connected() { return this.socket !== null && this.welcomed; }

  /// The owner gives up on the connection (dead, unanswered, refused for now); `immediately` connects again at once.
  drop(ending, immediately) {
    if (this.socket === null || this.closed) return;
    this.lose(ending, immediately === true);
  }

  networkLost() {
    if (this.closed || this.offline) return;
    this.offline = true;
    this.hold('the network went away');
    this.owner.announce({ kind: 'offline' });
  }

  networkAvailable() {
    if (this.closed) return;
    this.offline = false;
    this.release();
  }

  /// The app went to the background and wants no connection meanwhile: the socket is closed with 1000 and no
  /// attempt (nor token call) is made until appEnteredForeground().
  appEnteredBackground() {
    if (this.closed || this.inBackground) return;
    this.inBackground = true;
    this.hold('the app went to the background');
    this.owner.announce({ kind: 'background' });
  }

  appEnteredForeground() {
    if (this.closed) return;
    this.inBackground = false;
    this.release();
  }

  reconnectNow() { if (!this.closed) this.nudge(true); }

  // ---- inside

  /// No network, or the app in the background: nothing may be attempted until release().
  get held() { return this.offline || this.inBackground; }

  hold(reason) {
    if (this.socket) this.lose(Ending.dead(reason), false);
    else if (this.timer.wait !== null) {
      this.clear('wait');
      this.parked = { type: 'wait', delayMs: Math.max(0, this.rules.waitUntil - this.now), attempt: this.rules.failures, reason };
    }
  }

  /// What held the link back is gone: the attempt held back is made at once (within the attempt gap), and an open
  /// connection silent for too long is replaced.
  release() {
    if (this.held) return;
    const parked = this.parked;
    this.parked = null;
    if (parked && parked.type === 'connect') {
      this.perform(parked);
      return;
    }
    this.nudge(false);
  }

  nudge(always) {
    if (this.socket) {
      if (always) this.lose(Ending.dead('the app asked to reconnect'), true);
      else if (this.now - this.lastReceived > this.numbers.silenceBeforeReplacingMs) {
        this.lose(Ending.dead('silent for more than ' + seconds(this.numbers.silenceBeforeReplacingMs) + ' when the network came back'), true);
      }
      return;
    }
    if (this.rules.phase === 'waiting') {
      const next = this.rules.connectivityReturned(this.now);
      if (next.type === 'wait' && this.timer.wait !== null && this.rules.waitUntil >= this.waitEnd) {
        this.rules.waitUntil = this.waitEnd;
        return;
      }
      this.clear('wait');
      this.perform(next);
    }
  }

  clear(name) {
    if (this.timer[name] !== null) this.timers.clearTimeout(this.timer[name]);
    this.timer[name] = null;
  }

  perform(action) {
    if (this.closed) return;
    if (this.held && (action.type === 'connect' || action.type === 'wait')) {
      this.parked = action;
      return;
    }
    if (action.type === 'stop') {
      this.closed = true;
      this.owner.stopped(action.reason, action.ending);
    } else if (action.type === 'wait') {
      this.owner.announce({ kind: 'reconnecting', delayMs: action.delayMs, attempt: action.attempt, reason: action.reason, at: this.now + action.delayMs });
      this.waitEnd = this.now + action.delayMs;
      this.timer.wait = this.timers.setTimeout(() => {
        this.timer.wait = null;
        this.perform(this.rules.delayElapsed());
      }, action.delayMs);
    } else if (action.type === 'connect') {
      this.connect(action.renew);
    }
  }

  async connect(renew) {
    const generation = ++this.generation;
    this.rules.attempting(this.now);
    const expiry = this.token === null ? null : tokenExpiry(this.token);
    if (renew || this.token === null || (expiry !== null && expiry - this.now <= this.numbers.tokenRenewalMarginMs)) {
      try {
        const token = await this.config.token();
        if (typeof token !== 'string' || token === '') throw new Error('it gave no token');
        this.token = token;
      } catch (error) {
        if (generation === this.generation && !this.closed) this.failed(Ending.unreachable('the token provider failed: ' + messageOf(error)));
        return;
      }
      if (generation !== this.generation || this.closed) return;
    }
    this.open(generation);
  }

  open(generation) {
    if (this.held) {
      this.parked = { type: 'connect', renew: false };
      return;
    }
    const Socket = this.config.WebSocket || (typeof WebSocket === 'undefined' ? undefined : WebSocket);
    if (typeof Socket !== 'function') {
      this.failed(Ending.unreachable('no WebSocket implementation: pass one as the WebSocket option'));
      return;
    }
    let socket;
    try {
      socket = this.tokenInHeader
        ? new Socket(this.config.url, [], { headers: { Authorization: 'Bearer ' + this.token } })
        : new Socket(withToken(this.config.url, this.token));
    } catch (error) {
      this.failed(Ending.unreachable('the WebSocket could not be made: ' + messageOf(error)));
      return;
    }
    this.socket = socket;
    this.welcomed = false;
    this.opened = false;
    this.probeAt = null;
    const mine = () => this.socket === socket && generation === this.generation;
    const listen = (type, handler) => {
      if (typeof socket.addEventListener === 'function') socket.addEventListener(type, handler);
      else socket['on' + type] = handler;
    };
    listen('open', () => {
      if (!mine()) return;
      this.opened = true;
      this.lastReceived = this.now;
      this.rules.opened();
      // From the upgrade, `welcome` must come within the open timeout as well.
      this.armOpenTimer('no welcome within ' + seconds(this.numbers.openTimeoutMs) + ' of opening');
    });
    listen('message', (event) => {
      if (!mine()) return;
      this.lastReceived = this.now;
      this.probeAt = null;
      if (typeof event.data !== 'string') return;
      let frame;
      try { frame = JSON.parse(event.data); } catch (error) { return; }
      if (!frame || typeof frame !== 'object') return;
      if (frame.type === 'welcome' && !this.welcomed) {
        this.clear('open');
        this.welcomed = true;
        this.rules.welcomed(typeof frame.heartbeat === 'number' ? frame.heartbeat : 0);
        this.armSilence();
        this.owner.welcomed(frame);
      } else if (this.welcomed) {
        this.owner.frame(frame);
      }
    });
    listen('close', (event) => {
      if (!mine()) return;
      const code = event && typeof event.code === 'number' ? event.code : null;
      const reason = event && typeof event.reason === 'string' ? event.reason : '';
      if (this.opened) {
        this.lose(Ending.closed(code === 1005 || code === 1006 ? null : code, reason), false);
        return;
      }
      // A browser hides why an upgrade failed: ask the same address over plain HTTP, which says.
      this.detach(false);
      this.diagnose(generation).then((ending) => {
        if (generation === this.generation && !this.closed && this.socket === null) this.failed(ending);
      });
    });
    listen('error', () => { /* a close event follows, which says more */ });
    this.armOpenTimer('the connection did not open within ' + seconds(this.numbers.openTimeoutMs));
  }

  armOpenTimer(reason) {
    this.clear('open');
    this.timer.open = this.timers.setTimeout(() => {
      this.timer.open = null;
      if (this.socket) this.lose(Ending.dead(reason), false);
    }, this.numbers.openTimeoutMs);
  }

  // Nothing for one heartbeat: the owner sends a frame the broker answers. Still nothing one heartbeat later: the
  // path is dead (a browser's script can neither send nor see pings). So a silent path is left within two.
  armSilence() {
    this.clear('silence');
    const keepalive = this.rules.keepaliveMs;
    const since = this.probeAt !== null ? this.probeAt : Math.max(this.lastReceived, this.declinedAt);
    const wait = Math.max(1, since + keepalive - this.now);
    this.timer.silence = this.timers.setTimeout(() => {
      this.timer.silence = null;
      if (!this.socket) return;
      const now = this.now;
      if (this.probeAt !== null && now - this.probeAt >= keepalive) {
        this.lose(Ending.dead('nothing arrived for ' + seconds(now - this.lastReceived) + ', not even the answer to a check'), false);
        return;
      }
      if (this.probeAt === null && now - Math.max(this.lastReceived, this.declinedAt) >= keepalive) {
        if (this.owner.probe()) this.probeAt = now;
        else this.declinedAt = now; // nothing to ask: look again one heartbeat later
      }
      this.armSilence();
    }, wait);
  }

  detach(closeSocket) {
    this.clear('open');
    this.clear('silence');
    const socket = this.socket;
    this.socket = null;
    const wasWelcomed = this.welcomed;
    this.welcomed = false;
    if (socket && closeSocket) {
      try { socket.close(1000); } catch (error) { /* already closing */ }
    }
    return wasWelcomed;
  }

  lose(ending, immediately) {
    const wasWelcomed = this.detach(true);
    if (wasWelcomed) this.owner.disconnected();
    if (this.closed) return;
    let action = this.rules.ended(ending, this.now);
    if (immediately && action.type === 'wait') action = this.rules.connectivityReturned(this.now);
    this.perform(action);
  }

  failed(ending) {
    this.detach(true);
    if (this.closed) return;
    this.perform(this.rules.ended(ending, this.now));
  }

  async diagnose(generation) {
    const address = httpAddress(this.config.url);
    const fetcher = this.config.fetch || (typeof fetch === 'function' ? fetch : null);
    if (!address || !fetcher) return Ending.unreachable('the WebSocket could not be opened');
    let timeout = null;
    const limit = new Promise((resolve) => {
      timeout = this.timers.setTimeout(() => resolve(null), this.numbers.diagnoseTimeoutMs);
    });
    try {
      const header = this.tokenInHeader;
      const request = fetcher(header ? address : withToken(address, this.token), {
        cache: 'no-store', credentials: 'omit', headers: header ? { Authorization: 'Bearer ' + this.token } : {},
      }).then(async (response) => {
        let body = null;
        try { body = await response.json(); } catch (error) { body = null; }
        const message = body && body.error && typeof body.error.message === 'string' ? body.error.message : 'HTTP ' + response.status;
        return { status: response.status, message };
      });
      const answer = await Promise.race([request, limit]);
      if (answer === null) return Ending.unreachable('the broker cannot be reached (no answer within ' + seconds(this.numbers.diagnoseTimeoutMs) + ')');
      // 400: the token and the endpoint are fine (the answer to a GET that is no upgrade): the refusal was passing.
      if (answer.status === 400) return Ending.unreachable('the WebSocket could not be opened (a proxy may be in the way)');
      return Ending.refused(answer.status, answer.message);
    } catch (error) {
      return Ending.unreachable('the broker cannot be reached');
    } finally {
      if (timeout !== null) this.timers.clearTimeout(timeout);
    }
  }
}

function seconds(ms) {
  return ms % 1000 === 0 ? ms / 1000 + ' s' : Math.round(ms) + ' ms';
}

function messageOf(error) {
  return error && typeof error.message === 'string' ? error.message : String(error);
}

// ---------------------------------------------------------------- the donor's watcher

/// Follows one donation for its donor across reconnects and tells what happens as events (see `on`).
///
///     const watcher = new DonationWatcher({ url: 'wss://broker.example.org/v1/ws', donation: 'd-123',
///                                           token: async () => backend.donorToken() });
///     watcher.on('position', ({ seq, position }) => map.moveVehicle(position));
///     watcher.on('ended', (end) => screen.finish(end));
///     watcher.start();
export class DonationWatcher {
  constructor(config) {
    if (!config || (typeof config.donation === 'string') === (typeof config.channel === 'string')) {
      throw new TypeError('exactly one of donation and channel is required');
    }
    this.target = typeof config.donation === 'string' ? { donation: config.donation } : { channel: config.channel };
    this.waitWhileNotTrackable = config.waitWhileNotTrackable !== false;
    this.events = new Emitter();
    this.link = new Link(config, this);
    this.numbers = this.link.numbers;
    this.timers = this.link.timers;
    this.highestSeq = null;
    this.facts = null;
    this.ended = null;
    this.lastFix = null;
    this.staleAnnounced = false;
    /// The place whose arrival was told for the current destination (the broker repeats it after a subscribe).
    this.arrived = null;
    this.subscribedOnce = false;
    this.pending = null;
    this.requests = 0;
    this.timer = { subscribe: null, resubscribe: null, stale: null };
    this.started = false;
    this.attachments = new Attachments();
  }

  /// Listens to `type`: 'connection', 'subscribed', 'waiting', 'position', 'paused', 'resumed', 'state',
  /// 'presence', 'arrival', 'stale', 'fresh', 'not-trackable', 'ended'. Returns a function that stops listening.
  on(type, listener) { return this.events.on(type, listener); }

  /// Connects and subscribes; reconnects by the rules until tracking ends or close() is called.
  start() {
    if (this.started) throw new Error('the watcher was started already');
    this.started = true;
    this.events.emit('connection', { kind: 'connecting' });
    this.link.start();
  }

  /// Stops watching: the socket is closed, no timer is left, 'ended' says {kind: 'stopped'}.
  close() { this.end({ kind: 'stopped' }); }

  networkLost() { this.link.networkLost(); }
  networkAvailable() { this.link.networkAvailable(); }
  /// Closes the connection politely until appEnteredForeground() (a donor's screen shows nothing meanwhile, and
  /// iOS would cut the socket anyway); the positions missed come with `since` on return.
  appEnteredBackground() { this.link.appEnteredBackground(); }
  appEnteredForeground() { this.link.appEnteredForeground(); }
  reconnectNow() { this.link.reconnectNow(); }

  /// Follows React Native's AppState: in the background the connection is closed (`{background: 'stay'}` keeps
  /// it), back in the foreground it is made again at once. Returns a function that stops following; close() stops too.
  attachAppState(AppState, options) {
    return this.attachments.add(followAppState(this, AppState, pausesInBackground(options, 'pause')));
  }

  /// Follows NetInfo: no attempt while offline, one at once when the network is back. Returns a function that stops
  /// following; close() stops too.
  attachNetInfo(NetInfo) { return this.attachments.add(followNetInfo(this, NetInfo)); }

  /// Whether positions are shared now.
  get tracking() { return this.facts !== null && this.facts.tracking; }

  // ---- the link's owner

  announce(change) { if (!this.ended) this.events.emit('connection', change); }

  welcomed() { this.subscribe(false); }

  probe() {
    if (this.ended) return false;
    // An answer to a subscribe still pending proves the path as well.
    if (this.pending === null) this.subscribe(true);
    return true;
  }

  disconnected() {
    this.pending = null;
    this.clear('subscribe');
    this.clear('resubscribe');
  }

  stopped(reason, ending) {
    if (ending.kind === 'refused' && ending.status === 401) this.end({ kind: 'unauthorized', message: ending.message });
    else if (!this.subscribedOnce && ending.kind === 'refused' && ending.status === 404) this.end({ kind: 'connectionFailed', message: ending.message });
    else this.end({ kind: 'connectionFailed', message: reason });
  }

  frame(frame) {
    if (this.ended) return;
    const pending = this.pending;
    if (frame.type === 'error' && pending !== null && frame.re === pending.id) {
      this.pending = null;
      this.clear('subscribe');
      this.refused(String(frame.code), typeof frame.message === 'string' ? frame.message : '');
    } else if (frame.type === 'subscribed' && pending !== null && frame.re === pending.id) {
      this.pending = null;
      this.clear('subscribe');
      this.clear('resubscribe');
      if (!pending.probe) {
        this.events.emit('connection', this.subscribedOnce
          ? { kind: 'reconnected', since: pending.since, state: frame.state, tracking: frame.tracking === true }
          : { kind: 'connected' });
      }
      this.subscribedOnce = true;
      this.subscribed(frame, pending.since);
    } else {
      this.apply(frame);
    }
  }

  // ---- subscribing

  subscribe(probe) {
    this.requests += 1;
    const id = 's' + this.requests;
    const frame = Object.assign({ type: 'subscribe', id }, this.target);
    if (this.highestSeq !== null) frame.since = this.highestSeq;
    if (!this.link.send(frame)) return;
    this.pending = { id, since: this.highestSeq, probe };
    this.clear('subscribe');
    this.timer.subscribe = this.timers.setTimeout(() => {
      this.timer.subscribe = null;
      this.link.drop(Ending.dead('no answer to subscribe within ' + seconds(this.numbers.subscribeTimeoutMs)), false);
    }, this.numbers.subscribeTimeoutMs);
  }

  refused(code, message) {
    if (code === 'not-trackable' && (this.subscribedOnce || this.waitWhileNotTrackable)) {
      // The trip has not started (CREATED), or an older broker refuses subscribes during a pause: ask again now and then.
      if (this.facts !== null && this.facts.tracking) {
        this.facts.tracking = false;
        this.facts.destination = null;
        this.clear('stale');
        this.events.emit('paused', { state: this.facts.state });
      }
      this.events.emit('not-trackable', { message, retryAt: this.timers.now() + this.numbers.notTrackableRetryMs });
      this.clear('resubscribe');
      this.timer.resubscribe = this.timers.setTimeout(() => {
        this.timer.resubscribe = null;
        if (this.pending === null) this.subscribe(false);
      }, this.numbers.notTrackableRetryMs);
      return;
    }
    if (!this.subscribedOnce) {
      this.end({ kind: 'refused', code, message });
    } else if (code === 'unavailable' || code === 'internal' || code === 'rate-limited' || code === 'limit-reached') {
      this.link.drop(Ending.closed(null, 'the broker could not subscribe now (' + code + '): ' + message), false);
    } else {
      this.end({ kind: 'refusedAfterReconnect', code, message });
    }
  }

  // ---- what the frames mean (Swift's DonationTracker)

  subscribed(s, since) {
    const facts = {
      donation: s.donation, channel: s.channel, state: s.state, tracking: s.tracking === true,
      destination: s.destination || null, home: s.home || null, institution: s.institution || null,
      online: typeof s.online === 'boolean' ? s.online : null,
    };
    const old = this.facts;
    this.facts = facts;
    let waiting = false;
    if (old === null) {
      this.events.emit('subscribed', Object.assign({}, facts));
    } else {
      waiting = this.change(facts.state, facts.tracking, facts.destination, old);
      // While paused the broker does not tell presence (online null): nothing to announce.
      if (facts.online !== null && old.online !== facts.online) this.events.emit('presence', { online: facts.online, lastSeen: null });
    }
    // After `since`, the backlog that follows ends with `last`: taking it now would skip the older ones.
    const last = s.last;
    if (last && typeof last.seq === 'number' && (since === null || last.seq <= since)) this.take(last.seq, last.position);
    const expectingBacklog = since !== null && !!last && last.seq > since;
    if (facts.tracking && this.lastFix === null && !expectingBacklog && !waiting) this.events.emit('waiting', {});
  }

  apply(frame) {
    const facts = this.facts;
    if (facts === null || frame.channel !== facts.channel) return;
    const ours = frame.donation === undefined || frame.donation === facts.donation;
    switch (frame.type) {
      case 'position':
        this.take(frame.seq, frame.position);
        break;
      case 'state':
        if (!ours) break;
        this.change(frame.state, frame.tracking === true, frame.destination || null, Object.assign({}, facts));
        facts.state = frame.state;
        facts.tracking = frame.tracking === true;
        facts.destination = frame.destination || null;
        break;
      case 'arrival':
        if (!ours || this.arrived === frame.place) break;
        this.arrived = frame.place;
        this.events.emit('arrival', { place: frame.place, distance: frame.distance });
        break;
      case 'presence':
        facts.online = frame.online === true;
        this.events.emit('presence', { online: frame.online === true, lastSeen: typeof frame.lastSeen === 'number' ? frame.lastSeen : null });
        break;
      case 'unsubscribed':
        if (ours) this.end({ kind: 'unsubscribed', reason: frame.reason });
        break;
      default:
        break; // a newer broker's frame: ignored
    }
  }

  /// A position: dropped when its seq was seen, so positions come once each, in rising seq order.
  take(seq, position) {
    if (typeof seq !== 'number' || !position || typeof position !== 'object') return;
    if (this.highestSeq !== null && seq <= this.highestSeq) return;
    this.highestSeq = seq;
    this.lastFix = typeof position.timestamp === 'number' ? position.timestamp : null;
    if (this.staleAnnounced) this.events.emit('fresh', {});
    this.staleAnnounced = false;
    this.events.emit('position', { seq, position });
    this.armStale();
  }

  /// Returns whether it announced 'waiting' (a resume).
  change(state, tracking, destination, old) {
    if (destination !== old.destination) this.arrived = null;
    if (old.tracking && !tracking) {
      this.clear('stale');
      this.events.emit('paused', { state });
      return false;
    }
    if (!old.tracking && tracking) {
      // Positions kept before the pause are forgotten by the broker: the next one is news.
      this.lastFix = null;
      this.staleAnnounced = false;
      this.clear('stale');
      this.events.emit('resumed', { state, destination });
      this.events.emit('waiting', {});
      return true;
    }
    if (old.state !== state || old.destination !== destination) this.events.emit('state', { state, tracking, destination });
    return false;
  }

  armStale() {
    this.clear('stale');
    if (this.lastFix === null || !this.tracking || this.staleAnnounced) return;
    const lastFix = this.lastFix;
    const wait = Math.max(0, lastFix + this.numbers.staleAfterMs - this.timers.now()) + 1;
    this.timer.stale = this.timers.setTimeout(() => {
      this.timer.stale = null;
      if (this.ended || !this.tracking || this.lastFix !== lastFix) return;
      if (this.timers.now() - lastFix <= this.numbers.staleAfterMs) {
        this.armStale();
        return;
      }
      this.staleAnnounced = true;
      this.events.emit('stale', { lastFix });
    }, wait);
  }

  clear(name) {
    if (this.timer[name] !== null) this.timers.clearTimeout(this.timer[name]);
    this.timer[name] = null;
  }

  end(how) {
    if (this.ended) return;
    this.ended = how;
    this.pending = null;
    this.clear('subscribe');
    this.clear('resubscribe');
    this.clear('stale');
    this.link.close();
    this.attachments.releaseAll();
    this.events.emit('ended', how);
  }
}

// ---------------------------------------------------------------- the volunteer's publisher

/// Publishes a volunteer's fixes over one connection kept open across network changes, expired tokens and broker
/// restarts. A fix stays pending until its `ack` (or `error`); after a reconnect the newest fix not acknowledged is
/// sent (never a queue of old ones, never an older after a newer).
///
///     const publisher = new VolunteerPublisher({ url, token: async () => backend.volunteerToken() });
///     publisher.on('audience', (audience) => gps.setInterval(audience.tracking && audience.watchers > 0 ? 5 : 60));
///     publisher.start();
///     publisher.publish({ lat, lon, accuracy, speed, heading, timestamp: Date.now() });
export class VolunteerPublisher {
  constructor(config) {
    this.events = new Emitter();
    this.link = new Link(config || {}, this);
    this.numbers = this.link.numbers;
    this.timers = this.link.timers;
    this.audience = null;
    this.unacknowledged = [];
    this.waiting = null;
    this.newestHanded = null;
    this.counter = 0;
    this.connectedOnce = false;
    this.stoppedFor = null;
    this.ackTimer = null;
    this.started = false;
    this.attachments = new Attachments();
  }

  /// Listens to `type`: 'connection', 'audience', 'fix' ({position, result: 'accepted' | 'refused' |
  /// 'superseded' | 'dropped', ...}), 'stopped'. Returns a function that stops listening.
  on(type, listener) { return this.events.on(type, listener); }

  start() {
    if (this.started) throw new Error('the publisher was started already');
    this.started = true;
    this.events.emit('connection', { kind: 'connecting' });
    this.link.start();
  }

  /// Stops: the socket is closed, no timer is left, every fix still pending is reported dropped.
  close() { this.stop('stopped'); }

  networkLost() { this.link.networkLost(); }
  networkAvailable() { this.link.networkAvailable(); }
  /// Closes the connection politely until appEnteredForeground(); the newest fix handed over meanwhile is sent then.
  /// Not called by attachAppState unless asked: a volunteer's phone publishes from the background.
  appEnteredBackground() { this.link.appEnteredBackground(); }
  appEnteredForeground() { this.link.appEnteredForeground(); }
  reconnectNow() { this.link.reconnectNow(); }

  /// Follows React Native's AppState: back in the foreground, a connection gone silent is replaced and a pending
  /// retry made at once. The connection stays in the background (the phone keeps publishing, as far as the system
  /// lets the app run); `{background: 'pause'}` closes it there. Returns a function that stops following; close()
  /// stops too.
  attachAppState(AppState, options) {
    return this.attachments.add(followAppState(this, AppState, pausesInBackground(options, 'stay')));
  }

  /// Follows NetInfo: no attempt while offline, one at once when the network is back. Returns a function that stops
  /// following; close() stops too.
  attachNetInfo(NetInfo) { return this.attachments.add(followNetInfo(this, NetInfo)); }

  /// Sends the fix now if connected; otherwise keeps it as the one fix to send on reconnecting (an older one kept
  /// is then superseded). A fix not newer than one handed over before is superseded at once. Absent values are left
  /// out first (brokerPosition). Returns a promise of the fix's outcome, the same object the 'fix' event carries:
  /// 'accepted' (the broker's `ack`: seq, audience), 'refused' (its `error`: code, message), 'superseded' or
  /// 'dropped'. It never rejects, so a fix handed over without waiting cannot leave an unhandled rejection.
  publish(fix) {
    if (!fix || typeof fix.timestamp !== 'number') throw new TypeError('a position needs lat, lon and timestamp (milliseconds)');
    let settle = null;
    const outcome = new Promise((resolve) => { settle = resolve; });
    const entry = { position: brokerPosition(fix), settle };
    if (this.stoppedFor !== null) {
      this.report(entry, { result: 'dropped', reason: 'the publisher has stopped' });
      return outcome;
    }
    if (this.newestHanded !== null && fix.timestamp <= this.newestHanded) {
      this.report(entry, { result: 'superseded' });
      return outcome;
    }
    this.newestHanded = fix.timestamp;
    if (!this.link.connected) {
      if (this.waiting !== null) this.report(this.waiting, { result: 'superseded' });
      this.waiting = entry;
      return outcome;
    }
    this.send(entry);
    return outcome;
  }

  // ---- the link's owner

  announce(change) { if (this.stoppedFor === null) this.events.emit('connection', change); }

  welcomed() {
    this.events.emit('connection', this.connectedOnce ? { kind: 'reconnected', since: null } : { kind: 'connected' });
    this.connectedOnce = true;
    const entry = this.waiting;
    if (entry === null) return;
    this.waiting = null;
    if (entry.position.timestamp < this.timers.now() - this.numbers.maximumFixAgeMs) {
      this.report(entry, { result: 'dropped', reason: 'too old to send' });
      return;
    }
    this.send(entry);
  }

  frame(frame) {
    if (frame.type !== 'ack' && frame.type !== 'error') return;
    const index = this.unacknowledged.findIndex((sent) => sent.id === frame.re);
    if (index < 0) return;
    const sent = this.unacknowledged.splice(index, 1)[0];
    this.armAckTimer();
    if (frame.type === 'error') {
      this.report(sent.entry, { result: 'refused', code: frame.code, message: frame.message });
      return;
    }
    const audience = { tracking: frame.tracking === true, watchers: typeof frame.watchers === 'number' ? frame.watchers : 0 };
    if (typeof frame.reason === 'string') audience.reason = frame.reason;
    const changed = this.audience === null || this.audience.tracking !== audience.tracking ||
      this.audience.watchers !== audience.watchers || this.audience.reason !== audience.reason;
    this.audience = audience;
    this.report(sent.entry, { result: 'accepted', seq: typeof frame.seq === 'number' ? frame.seq : null, audience });
    if (changed) this.events.emit('audience', audience);
  }

  // An idle publisher has nothing to lose on a silent path: the next fix's missing ack finds it.
  probe() { return false; }

  /// The connection ended: the newest fix not acknowledged waits for the next one, the older ones are superseded.
  disconnected() {
    this.clearAckTimer();
    const candidates = this.unacknowledged.map((sent) => sent.entry);
    if (this.waiting !== null) candidates.push(this.waiting);
    this.unacknowledged = [];
    this.waiting = null;
    if (candidates.length === 0) return;
    const newest = candidates.reduce((a, b) => (b.position.timestamp > a.position.timestamp ? b : a));
    this.waiting = newest;
    for (const entry of candidates) if (entry !== newest) this.report(entry, { result: 'superseded' });
  }

  stopped(reason) { this.stop(reason); }

  // ---- inside

  send(entry) {
    this.counter += 1;
    const id = 'p' + this.counter;
    this.unacknowledged.push({ id, entry, sentAt: this.timers.now() });
    // A failed write is noticed by the connection's end or the missing ack; the fix stays pending meanwhile.
    this.link.send({ type: 'publish', id, position: entry.position });
    if (this.ackTimer === null) this.armAckTimer();
  }

  armAckTimer() {
    this.clearAckTimer();
    if (this.unacknowledged.length === 0) return;
    const oldest = this.unacknowledged[0].sentAt;
    this.ackTimer = this.timers.setTimeout(() => {
      this.ackTimer = null;
      this.link.drop(Ending.dead('no ack within ' + seconds(this.numbers.ackTimeoutMs)), true);
    }, Math.max(0, oldest + this.numbers.ackTimeoutMs - this.timers.now()));
  }

  clearAckTimer() {
    if (this.ackTimer !== null) this.timers.clearTimeout(this.ackTimer);
    this.ackTimer = null;
  }

  /// Tells a fix's outcome, to the 'fix' listeners and to the promise publish() returned.
  report(entry, outcome) {
    const detail = Object.assign({ position: entry.position }, outcome);
    this.events.emit('fix', detail);
    entry.settle(detail);
  }

  stop(reason) {
    if (this.stoppedFor !== null) return;
    this.stoppedFor = reason;
    this.clearAckTimer();
    this.link.close();
    this.attachments.releaseAll();
    const pending = this.unacknowledged.map((sent) => sent.entry);
    if (this.waiting !== null) pending.push(this.waiting);
    this.unacknowledged = [];
    this.waiting = null;
    for (const entry of pending) this.report(entry, { result: 'dropped', reason: 'the publisher stopped before its ack' });
    this.events.emit('stopped', { reason });
  }
}
