// The donor's watcher under node: a fake WebSocket played as the broker, and a hand-moved clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DonationWatcher, DEFAULTS } from '../location-broker-client.js';
import { FakeClock, socketClass, recorder, jwt, settle } from './fakes.js';

const TYPES = ['connection', 'subscribed', 'waiting', 'position', 'paused', 'resumed', 'state', 'presence', 'arrival', 'stale',
  'fresh', 'not-trackable', 'ended'];

function subscribedFrame(re, extra = {}) {
  return Object.assign({
    type: 'subscribed', re, channel: 'vol@example.org', donation: 'd-1', state: 'BEING-LOOKED-FOR', tracking: true,
    destination: 'home', home: { lat: 0, lon: 0 }, institution: null, last: null, online: true,
  }, extra);
}
const position = (seq, timestamp) => ({ type: 'position', channel: 'vol@example.org', seq, position: { lat: 0, lon: 0, timestamp } });

function setUp(options = {}) {
  const clock = new FakeClock();
  const Socket = socketClass();
  let tokens = 0;
  const watcher = new DonationWatcher(Object.assign({
    url: 'wss://broker.test/v1/ws', donation: 'd-1', WebSocket: Socket, timers: clock, random: () => 0.999999,
    fetch: () => new Promise(() => {}),
    token: async () => { tokens += 1; return 't' + tokens; },
  }, options));
  const seen = recorder(watcher, TYPES);
  return { clock, Socket, watcher, seen, tokens: () => tokens };
}

/// Starts, welcomes and grants the subscription; returns the socket.
async function live(setup, extra = {}, heartbeat = 30) {
  const { Socket, clock } = setup;
  await clock.advance(0);
  const socket = Socket.last();
  socket.welcome(heartbeat);
  const subscribe = socket.frames('subscribe').pop();
  socket.receive(subscribedFrame(subscribe.id, extra));
  return socket;
}

const kinds = (seen, type) => seen.filter(([t]) => t === type).map(([, detail]) => detail);

test('positions come once each, in rising seq order; a reconnect subscribes with since and drops what was seen', async () => {
  const setup = setUp();
  setup.watcher.start();
  const socket = await live(setup);
  for (const seq of [5, 6, 6, 4, 7]) socket.receive(position(seq, setup.clock.now()));
  assert.deepEqual(kinds(setup.seen, 'position').map((p) => p.seq), [5, 6, 7]);
  socket.serverClose(1006);
  await setup.clock.advance(DEFAULTS.backoffInitialMs);
  const again = setup.Socket.last();
  assert.notEqual(again, socket);
  again.welcome();
  const subscribe = again.frames('subscribe').pop();
  assert.equal(subscribe.since, 7);
  assert.equal(subscribe.donation, 'd-1');
  // The backlog after since, ending with `last`: `last` is not taken before the older ones.
  again.receive(subscribedFrame(subscribe.id, { last: { seq: 9, position: { lat: 0, lon: 0, timestamp: 1 } } }));
  for (const seq of [7, 8, 9]) again.receive(position(seq, setup.clock.now()));
  assert.deepEqual(kinds(setup.seen, 'position').map((p) => p.seq), [5, 6, 7, 8, 9]);
  assert.deepEqual(kinds(setup.seen, 'connection').filter((c) => c.kind === 'reconnected'), [{ kind: 'reconnected', since: 7, state: 'BEING-LOOKED-FOR', tracking: true }]);
  setup.watcher.close();
  assert.equal(setup.clock.pending, 0, 'no timer left after close()');
});

test('backoff: full jitter from 0.5 s doubling to 15 s, reset by a welcome', async () => {
  const setup = setUp();
  setup.watcher.start();
  await setup.clock.advance(0);
  const delays = [];
  for (let attempt = 0; attempt < 7; attempt += 1) {
    setup.Socket.last().open();
    setup.Socket.last().serverClose(1006);
    delays.push(Math.round(setup.clock.next().delay));
    await setup.clock.advance(setup.clock.next().delay);
  }
  assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 15000, 15000]);
  // A connection that got its welcome starts the backoff over.
  setup.Socket.last().welcome();
  setup.Socket.last().serverClose(1001, 'server shutting down');
  assert.equal(Math.round(setup.clock.next().delay), 500);
  const reconnecting = kinds(setup.seen, 'connection').pop();
  assert.equal(reconnecting.kind, 'reconnecting');
  assert.equal(reconnecting.reason, 'server shutting down (1001)');
  setup.watcher.close();
});

test('the jitter draws from zero up to the ceiling', async () => {
  const draws = [0, 0.25, 0.5];
  const setup = setUp({ random: () => draws.shift() });
  setup.watcher.start();
  await setup.clock.advance(0);
  const delays = [];
  for (let attempt = 0; attempt < 3; attempt += 1) {
    setup.Socket.last().open();
    setup.Socket.last().serverClose(1011);
    delays.push(setup.clock.next().delay);
    await setup.clock.advance(setup.clock.next().delay);
  }
  assert.deepEqual(delays, [0, 250, 1000]);
  setup.watcher.close();
});

test('4029, 4009 and HTTP 429 wait at least 5 s', async () => {
  for (const ending of [{ close: 4029 }, { close: 4009 }, { status: 429 }]) {
    const setup = setUp({
      random: () => 0,
      fetch: async () => ({ status: ending.status, json: async () => ({ error: { code: 'limit-reached', message: 'too many' } }) }),
    });
    setup.watcher.start();
    await setup.clock.advance(0);
    if (ending.close) {
      setup.Socket.last().open();
      setup.Socket.last().serverClose(ending.close);
    } else {
      setup.Socket.last().serverClose(1006); // the upgrade failed: the page asks over HTTP why
      await settle();
    }
    const reconnecting = kinds(setup.seen, 'connection').pop();
    assert.equal(reconnecting.kind, 'reconnecting', JSON.stringify(ending));
    assert.equal(reconnecting.delayMs, DEFAULTS.backoffPatienceMs, JSON.stringify(ending));
    setup.watcher.close();
  }
});

test('close codes: 4001 renews the token and reconnects at once; a protocol violation stops', async () => {
  const setup = setUp();
  setup.watcher.start();
  const socket = await live(setup);
  assert.equal(setup.tokens(), 1);
  socket.serverClose(4001, 'token expired');
  await setup.clock.advance(0);
  assert.equal(setup.tokens(), 2, 'a fresh token was asked for');
  assert.equal(setup.Socket.made.length, 2, 'and used at once, with no backoff');
  assert.match(setup.Socket.last().url, /token=t2$/);
  const again = setup.Socket.last();
  again.welcome();
  again.receive(subscribedFrame(again.frames('subscribe').pop().id));
  for (const code of [1002, 1003, 1007, 1009, 1010]) {
    const other = setUp();
    other.watcher.start();
    const s = await live(other);
    s.serverClose(code, 'broken');
    const ended = kinds(other.seen, 'ended');
    assert.equal(ended.length, 1, 'code ' + code);
    assert.equal(ended[0].kind, 'connectionFailed');
    assert.equal(other.clock.pending, 0, 'nothing more is tried after ' + code);
  }
  for (const code of [1000, 1001, 1011, 1012, 1013, 1014, 4008, 4000]) {
    const other = setUp();
    other.watcher.start();
    const s = await live(other);
    s.serverClose(code);
    assert.equal(kinds(other.seen, 'connection').pop().kind, 'reconnecting', 'code ' + code);
    other.watcher.close();
  }
  setup.watcher.close();
});

test('HTTP 401 asks for a fresh token; refused again, the watcher ends unauthorized', async () => {
  const asked = [];
  const setup = setUp({ fetch: async (url) => {
    asked.push(url);
    return { status: 401, json: async () => ({ error: { code: 'unauthorized', message: 'the token has expired' } }) };
  } });
  setup.watcher.start();
  await setup.clock.advance(0);
  setup.Socket.last().serverClose(1006);
  await setup.clock.advance(0);
  assert.equal(setup.tokens(), 2);
  assert.equal(setup.Socket.made.length, 2);
  setup.Socket.last().serverClose(1006);
  await setup.clock.advance(0);
  assert.deepEqual(kinds(setup.seen, 'ended'), [{ kind: 'unauthorized', message: 'the token has expired' }]);
  assert.deepEqual(asked, ['https://broker.test/v1/ws?token=t1', 'https://broker.test/v1/ws?token=t2'],
    'why an upgrade failed is asked over plain HTTP(S), with the same token');
  assert.equal(setup.clock.pending, 0);
});

test('HTTP 404 stops; HTTP 400 (the token is fine, the upgrade was refused on the way) retries', async () => {
  const stops = setUp({ fetch: async () => ({ status: 404, json: async () => ({ error: { code: 'not-found', message: 'no such path' } }) }) });
  stops.watcher.start();
  await stops.clock.advance(0);
  stops.Socket.last().serverClose(1006);
  await stops.clock.advance(0);
  assert.deepEqual(kinds(stops.seen, 'ended'), [{ kind: 'connectionFailed', message: 'no such path' }]);
  const retries = setUp({ fetch: async () => ({ status: 400, json: async () => ({}) }) });
  retries.watcher.start();
  await retries.clock.advance(0);
  retries.Socket.last().serverClose(1006);
  await retries.clock.advance(0);
  assert.equal(kinds(retries.seen, 'connection').pop().kind, 'reconnecting');
  retries.watcher.close();
});

test('the token is asked for when missing or about to expire, not before every attempt', async () => {
  for (const [lifetime, expected] of [[3600, 1], [30, 4]]) {
    let calls = 0;
    const setup = setUp({ token: async () => { calls += 1; return jwt(1_700_000_000 + lifetime); } });
    setup.watcher.start();
    await setup.clock.advance(0);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      setup.Socket.last().open();
      setup.Socket.last().serverClose(1006);
      await setup.clock.advance(setup.clock.next().delay);
    }
    assert.equal(setup.Socket.made.length, 4);
    assert.equal(calls, expected, lifetime === 3600 ? 'a token valid for an hour is kept across attempts'
      : 'a token expiring within a minute is renewed before each attempt');
    setup.watcher.close();
  }
});

test('a silent path is left within two heartbeats: a check, then nothing', async () => {
  const setup = setUp();
  setup.watcher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome(1);
  socket.receive(subscribedFrame(socket.frames('subscribe').pop().id));
  socket.receive(position(3, setup.clock.now()));
  await setup.clock.advance(999);
  assert.equal(socket.frames('subscribe').length, 1, 'no check while the heartbeat has not passed');
  await setup.clock.advance(1);
  const check = socket.frames('subscribe');
  assert.equal(check.length, 2, 'one heartbeat of silence: the watcher checks the path');
  assert.equal(check[1].since, 3);
  // An answer keeps it open, without a 'reconnected'.
  socket.receive(subscribedFrame(check[1].id));
  await setup.clock.advance(1000);
  assert.equal(socket.closedWith, undefined);
  assert.equal(kinds(setup.seen, 'connection').filter((c) => c.kind === 'reconnected').length, 0);
  // Now the path goes silent: the next check (one heartbeat after the last frame) is not answered.
  assert.equal(socket.frames('subscribe').length, 3);
  await setup.clock.advance(999);
  assert.equal(socket.closedWith, undefined);
  await setup.clock.advance(1);
  assert.equal(socket.closedWith, 1000, 'closed two heartbeats after the last frame');
  assert.equal(kinds(setup.seen, 'connection').pop().kind, 'reconnecting');
  setup.watcher.close();
  assert.equal(setup.clock.pending, 0);
});

test('no welcome, or no answer to subscribe, within 10 s: the connection is given up', async () => {
  const setup = setUp();
  setup.watcher.start();
  await setup.clock.advance(0);
  setup.Socket.last().open();
  await setup.clock.advance(DEFAULTS.openTimeoutMs);
  assert.equal(setup.Socket.last().closedWith, 1000);
  assert.match(kinds(setup.seen, 'connection').pop().reason, /no welcome within 10 s/);
  await setup.clock.advance(setup.clock.next().delay);
  setup.Socket.last().welcome();
  await setup.clock.advance(DEFAULTS.subscribeTimeoutMs);
  assert.equal(setup.Socket.last().closedWith, 1000);
  assert.match(kinds(setup.seen, 'connection').pop().reason, /no answer to subscribe within 10 s/);
  setup.watcher.close();
});

test('pause, resume, presence, arrival once per destination, and the end of the donation', async () => {
  const setup = setUp();
  setup.watcher.start();
  const socket = await live(setup);
  const arrival = { type: 'arrival', channel: 'vol@example.org', donation: 'd-1', place: 'home', distance: 80 };
  socket.receive(arrival);
  socket.receive(arrival);
  socket.receive({ type: 'state', channel: 'vol@example.org', donation: 'd-1', state: 'PICKED-BY-VOLUNTEER', tracking: false, destination: null });
  socket.receive({ type: 'state', channel: 'vol@example.org', donation: 'd-1', state: 'BEING-TAKEN-TO', tracking: true, destination: 'institution' });
  socket.receive({ type: 'presence', channel: 'vol@example.org', online: false, lastSeen: 5 });
  socket.receive({ type: 'presence', channel: 'someone-else', online: true, lastSeen: 6 });
  socket.receive({ type: 'unsubscribed', channel: 'vol@example.org', donation: 'd-1', reason: 'DELIVERED' });
  socket.receive(position(99, 1));
  assert.deepEqual(setup.seen.map(([type]) => type), ['connection', 'connection', 'subscribed', 'waiting', 'arrival', 'paused',
    'resumed', 'waiting', 'presence', 'ended']);
  assert.deepEqual(kinds(setup.seen, 'resumed'), [{ state: 'BEING-TAKEN-TO', destination: 'institution' }]);
  assert.deepEqual(kinds(setup.seen, 'ended'), [{ kind: 'unsubscribed', reason: 'DELIVERED' }]);
  assert.equal(socket.closedWith, 1000);
  assert.equal(setup.clock.pending, 0, 'no timer left after the end');
});

test('stale after 60 s without a position while tracking, fresh with the next one', async () => {
  const setup = setUp();
  setup.watcher.start();
  const socket = await live(setup, {}, 120); // no check of the path within the minute
  socket.receive(position(1, setup.clock.now()));
  await setup.clock.advance(DEFAULTS.staleAfterMs);
  assert.equal(kinds(setup.seen, 'stale').length, 0);
  await setup.clock.advance(1);
  assert.equal(kinds(setup.seen, 'stale').length, 1);
  socket.receive(position(2, setup.clock.now()));
  assert.equal(kinds(setup.seen, 'fresh').length, 1);
  setup.watcher.close();
});

test('not-trackable (the trip has not started) is asked again every 15 s; another refusal of the first subscribe ends', async () => {
  const setup = setUp();
  setup.watcher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  socket.receive({ type: 'error', re: socket.frames('subscribe').pop().id, code: 'not-trackable', message: 'd-1 is CREATED' });
  assert.equal(kinds(setup.seen, 'not-trackable').length, 1);
  await setup.clock.advance(DEFAULTS.notTrackableRetryMs);
  assert.equal(socket.frames('subscribe').length, 2);
  socket.receive({ type: 'error', re: socket.frames('subscribe').pop().id, code: 'not-found', message: 'no donation d-1 of yours' });
  assert.deepEqual(kinds(setup.seen, 'ended'), [{ kind: 'refused', code: 'not-found', message: 'no donation d-1 of yours' }]);
  assert.equal(setup.clock.pending, 0);
});

test('offline: no attempt until the network is back, then one at once', async () => {
  const setup = setUp();
  setup.watcher.start();
  const socket = await live(setup);
  setup.watcher.networkLost();
  assert.equal(socket.closedWith, 1000);
  assert.equal(kinds(setup.seen, 'connection').pop().kind, 'offline');
  await setup.clock.advance(120_000);
  assert.equal(setup.Socket.made.length, 1, 'no attempt while offline');
  setup.watcher.networkAvailable();
  await setup.clock.advance(0);
  assert.equal(setup.Socket.made.length, 2, 'an attempt as soon as the network is back');
  setup.watcher.close();
  assert.equal(setup.clock.pending, 0);
});

test('close() in any phase leaves no timer and no open socket', async () => {
  for (const phase of ['token', 'opening', 'subscribing', 'live', 'waiting', 'diagnosing']) {
    let release;
    const setup = setUp(phase === 'token' ? { token: () => new Promise((resolve) => { release = resolve; }) } : {});
    setup.watcher.start();
    await setup.clock.advance(0);
    const socket = setup.Socket.last();
    if (phase === 'subscribing') socket.welcome();
    if (phase === 'live') await live(setup);
    if (phase === 'waiting') { socket.open(); socket.serverClose(1006); }
    if (phase === 'diagnosing') socket.serverClose(1006);
    setup.watcher.close();
    if (release) release('late');
    await setup.clock.advance(60_000);
    assert.equal(setup.clock.pending, 0, phase);
    for (const made of setup.Socket.made) assert.equal(made.readyState, 3, phase + ': every socket closed');
    assert.deepEqual(kinds(setup.seen, 'ended'), [{ kind: 'stopped' }], phase);
  }
});
