// A hand-moved clock and a WebSocket the test plays the broker on: the module's rules without sockets or sleeps.

/// Timers that run only when the test moves the clock.
export class FakeClock {
  constructor(start = 1_700_000_000_000) {
    this.time = start;
    this.timers = [];
    this.nextId = 1;
    this.setTimeout = (callback, ms) => {
      const id = this.nextId++;
      this.timers.push({ id, callback, at: this.time + Math.max(0, ms), delay: ms });
      return id;
    };
    this.clearTimeout = (id) => {
      const index = this.timers.findIndex((timer) => timer.id === id);
      if (index >= 0) this.timers.splice(index, 1);
    };
    this.now = () => this.time;
  }

  /// The timers still set.
  get pending() { return this.timers.length; }

  /// The next timer due, if any.
  next() { return this.timers.slice().sort((a, b) => a.at - b.at)[0]; }

  /// Moves the clock by `ms`, running the timers that fall due, in order; lets promises settle between them.
  async advance(ms) {
    const until = this.time + ms;
    for (;;) {
      await settle();
      const due = this.next();
      if (!due || due.at > until) break;
      this.time = due.at;
      this.clearTimeout(due.id);
      due.callback();
    }
    this.time = until;
    await settle();
  }
}

/// Lets pending promise callbacks run.
export async function settle() {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
}

/// A WebSocket whose other end the test plays.
export function socketClass() {
  const made = [];
  class FakeSocket {
    constructor(url, protocols, options) {
      this.url = url;
      this.options = options;
      this.readyState = 0;
      this.sent = [];
      this.listeners = {};
      this.closedWith = undefined;
      made.push(this);
    }
    addEventListener(type, listener) { (this.listeners[type] = this.listeners[type] || []).push(listener); }
    send(text) { this.sent.push(JSON.parse(text)); }
    close(code) { this.closedWith = code; this.readyState = 3; }
    fire(type, event) { for (const listener of this.listeners[type] || []) listener(event || {}); }
    // The broker's side.
    open() { this.readyState = 1; this.fire('open'); }
    receive(frame) { this.fire('message', { data: JSON.stringify(frame) }); }
    welcome(heartbeat = 30) { this.open(); this.receive({ type: 'welcome', heartbeat, identity: 'someone' }); }
    serverClose(code, reason = '') { this.readyState = 3; this.fire('close', { code, reason }); }
    /// The frames the client sent of `type`.
    frames(type) { return this.sent.filter((frame) => frame.type === type); }
  }
  FakeSocket.made = made;
  FakeSocket.last = () => made[made.length - 1];
  return FakeSocket;
}

/// A JWT-shaped token (unsigned: the client never checks signatures) that expires at `expSeconds`.
export function jwt(expSeconds) {
  const part = (object) => Buffer.from(JSON.stringify(object)).toString('base64url');
  return part({ alg: 'HS256', typ: 'JWT' }) + '.' + part({ sub: 'donor@example.org', exp: expSeconds }) + '.c2ln';
}

/// Records every event of `emitter` for `types`, in order, as [type, detail].
export function recorder(emitter, types) {
  const seen = [];
  for (const type of types) emitter.on(type, (detail) => seen.push([type, detail]));
  return seen;
}

/// React Native's AppState as the client sees it: `currentState` and 'change' listeners with a `remove()`.
export class FakeAppState {
  constructor(currentState = 'active') {
    this.currentState = currentState;
    this.listeners = [];
  }
  addEventListener(type, listener) {
    if (type !== 'change') throw new Error('only change is followed here');
    this.listeners.push(listener);
    return { remove: () => { this.listeners = this.listeners.filter((other) => other !== listener); } };
  }
  /// The app moves to `state` ('active', 'inactive', 'background').
  become(state) {
    this.currentState = state;
    for (const listener of this.listeners.slice()) listener(state);
  }
}

/// @react-native-community/netinfo as the client sees it: addEventListener(listener) returns an unsubscribe function.
export class FakeNetInfo {
  constructor() { this.listeners = []; }
  addEventListener(listener) {
    this.listeners.push(listener);
    return () => { this.listeners = this.listeners.filter((other) => other !== listener); };
  }
  /// The device's network changes: `isConnected` true, false or null (not known yet).
  change(isConnected, type = isConnected ? 'wifi' : 'none') {
    for (const listener of this.listeners.slice()) listener({ type, isConnected, isInternetReachable: null, details: null });
  }
}
