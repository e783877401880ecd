// React Native under node: AppState and NetInfo fakes drive the clients, the token goes in a header where React
// Native's WebSocket takes one, publish() answers with the broker's outcome, and Core Location's -1 never leaves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from '../location-broker-client.js';
import { FakeClock, FakeAppState, FakeNetInfo, socketClass, recorder } from './fakes.js';

const { DonationWatcher, VolunteerPublisher, DEFAULTS } = client;
const T = 1_700_000_000_000;

function watcherSetUp(options = {}) {
  const clock = new FakeClock(T);
  const Socket = socketClass();
  let tokens = 0;
  const watcher = new DonationWatcher(Object.assign({
    url: 'wss://broker.test/v1/ws', donation: 'd-1', WebSocket: Socket, timers: clock, random: () => 0.5,
    fetch: () => new Promise(() => {}), token: async () => { tokens += 1; return 'donor-token'; },
  }, options));
  const seen = recorder(watcher, ['connection', 'position', 'ended']);
  return { clock, Socket, watcher, seen, tokens: () => tokens };
}

function publisherSetUp(options = {}) {
  const clock = new FakeClock(T);
  const Socket = socketClass();
  const publisher = new VolunteerPublisher(Object.assign({
    url: 'wss://broker.test/v1/ws', WebSocket: Socket, timers: clock, random: () => 0.5, token: async () => 'volunteer-token',
  }, options));
  return { clock, Socket, publisher };
}

/// Welcomes the watcher's socket and grants its subscription with one position (seq 7) seen.
async function subscribedWithOnePosition(setup) {
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  const subscribe = socket.frames('subscribe').pop();
  socket.receive({ type: 'subscribed', re: subscribe.id, channel: 'vol@example.org', donation: 'd-1', state: 'BEING-TAKEN-TO',
    tracking: true, destination: 'institution', home: null, institution: null, online: true,
    last: { seq: 7, position: { lat: 1, lon: 2, timestamp: setup.clock.now() } } });
  return socket;
}

test('AppState: in the background the watcher closes its socket politely and makes no attempt; back in the foreground it reconnects at once with since', async () => {
  const setup = watcherSetUp();
  const AppState = new FakeAppState('active');
  setup.watcher.attachAppState(AppState);
  setup.watcher.start();
  const socket = await subscribedWithOnePosition(setup);
  AppState.become('inactive'); // iOS: the app switcher; nothing changes
  assert.equal(socket.closedWith, undefined);
  AppState.become('background');
  assert.equal(socket.closedWith, 1000, 'closed with 1000, not left for the system to cut');
  await setup.clock.advance(10 * 60 * 1000);
  assert.equal(setup.Socket.made.length, 1, 'no attempt in ten minutes of background');
  assert.equal(setup.tokens(), 1, 'no token asked for in the background');
  AppState.become('active');
  await setup.clock.advance(0);
  assert.equal(setup.Socket.made.length, 2, 'an attempt at once in the foreground');
  const again = setup.Socket.last();
  again.welcome();
  assert.equal(again.frames('subscribe')[0].since, 7, 'the positions missed meanwhile are asked for');
  const kinds = setup.seen.filter(([type]) => type === 'connection').map(([, change]) => change.kind);
  assert.deepEqual(kinds, ['connecting', 'connected', 'background']);
  setup.watcher.close();
  assert.equal(setup.clock.pending, 0);
});

test('AppState: an app started in the background connects only when it comes to the foreground', async () => {
  const setup = watcherSetUp();
  const AppState = new FakeAppState('background');
  setup.watcher.attachAppState(AppState);
  setup.watcher.start();
  await setup.clock.advance(60_000);
  assert.equal(setup.Socket.made.length, 0);
  AppState.become('active');
  await setup.clock.advance(0);
  assert.equal(setup.Socket.made.length, 1);
  setup.watcher.close();
});

test('AppState: the publisher keeps publishing in the background; in the foreground a pending retry is made at once', async () => {
  const setup = publisherSetUp();
  const AppState = new FakeAppState('active');
  setup.publisher.attachAppState(AppState);
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  AppState.become('background');
  assert.equal(socket.closedWith, undefined, 'a volunteer publishes from the background');
  socket.serverClose(4029); // too many connections: at least 5 s before the next attempt
  const retryAt = setup.clock.next().at;
  assert.ok(retryAt > setup.clock.now() + DEFAULTS.minimumAttemptGapMs, 'a backoff wait is pending');
  await setup.clock.advance(DEFAULTS.minimumAttemptGapMs);
  assert.equal(setup.Socket.made.length, 1);
  AppState.become('active');
  await setup.clock.advance(0);
  assert.equal(setup.Socket.made.length, 2, 'the foreground does not wait for the backoff');
  setup.publisher.close();
});

test('AppState: the publisher asked to pause in the background sends its newest fix on return', async () => {
  const setup = publisherSetUp();
  const AppState = new FakeAppState('active');
  setup.publisher.attachAppState(AppState, { background: 'pause' });
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  AppState.become('background');
  assert.equal(socket.closedWith, 1000);
  const first = setup.publisher.publish({ lat: 1, lon: 2, timestamp: setup.clock.now() });
  const second = setup.publisher.publish({ lat: 1, lon: 2, timestamp: setup.clock.now() + 1 });
  assert.equal((await first).result, 'superseded');
  await setup.clock.advance(60_000);
  assert.equal(setup.Socket.made.length, 1);
  AppState.become('active');
  await setup.clock.advance(0);
  const again = setup.Socket.last();
  again.welcome();
  const [sent] = again.frames('publish');
  assert.equal(sent.position.timestamp, T + 1);
  again.receive({ type: 'ack', re: sent.id, seq: 12, tracking: true, watchers: 1 });
  assert.equal((await second).result, 'accepted');
  setup.publisher.close();
});

test('NetInfo: offline, no attempt and no token call until online; online, an attempt at once', async () => {
  const setup = watcherSetUp();
  const NetInfo = new FakeNetInfo();
  setup.watcher.attachNetInfo(NetInfo);
  setup.watcher.start();
  const socket = await subscribedWithOnePosition(setup);
  NetInfo.change(null); // not known yet: nothing changes
  assert.equal(socket.closedWith, undefined);
  NetInfo.change(false);
  assert.equal(socket.closedWith, 1000);
  await setup.clock.advance(5 * 60 * 1000);
  assert.equal(setup.Socket.made.length, 1, 'no attempt while offline');
  NetInfo.change(true, 'cellular');
  await setup.clock.advance(0);
  assert.equal(setup.Socket.made.length, 2, 'an attempt as soon as the network is back');
  setup.watcher.close();
});

test('NetInfo: a network change replaces a connection left silent by it', async () => {
  const setup = watcherSetUp();
  const NetInfo = new FakeNetInfo();
  setup.watcher.attachNetInfo(NetInfo);
  setup.watcher.start();
  const socket = await subscribedWithOnePosition(setup);
  NetInfo.change(true, 'wifi');
  assert.equal(socket.closedWith, undefined, 'a connection that hears from the broker stays');
  socket.readyState = 1;
  // Wi-Fi to cellular after 31 s of nothing received (the heartbeat's check is answered by nobody).
  setup.clock.time += DEFAULTS.silenceBeforeReplacingMs + 1000;
  NetInfo.change(true, 'cellular');
  assert.equal(socket.closedWith, 1000);
  await setup.clock.advance(0);
  assert.equal(setup.Socket.made.length, 2);
  setup.watcher.close();
});

test('close() stops following AppState and NetInfo; the function attach returns stops it earlier', async () => {
  const setup = watcherSetUp();
  const AppState = new FakeAppState();
  const NetInfo = new FakeNetInfo();
  setup.watcher.attachAppState(AppState);
  setup.watcher.attachNetInfo(NetInfo);
  assert.equal(AppState.listeners.length, 1);
  assert.equal(NetInfo.listeners.length, 1);
  setup.watcher.start();
  setup.watcher.close();
  assert.equal(AppState.listeners.length, 0);
  assert.equal(NetInfo.listeners.length, 0);

  const other = publisherSetUp();
  const detach = other.publisher.attachNetInfo(NetInfo);
  detach();
  assert.equal(NetInfo.listeners.length, 0);
  other.publisher.close();
  assert.throws(() => other.publisher.attachAppState(undefined), /AppState/);
  assert.throws(() => other.publisher.attachAppState(AppState, { background: 'close' }), /'pause' or 'stay'/);
});

test("the token goes in the Authorization header under React Native, in ?token= in a browser unless told", async () => {
  const original = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  try {
    Object.defineProperty(globalThis, 'navigator', { value: { product: 'ReactNative' }, configurable: true, writable: true });
    const native = publisherSetUp();
    native.publisher.start();
    await native.clock.advance(0);
    assert.equal(native.Socket.last().url, 'wss://broker.test/v1/ws', 'no token in the address');
    assert.deepEqual(native.Socket.last().options, { headers: { Authorization: 'Bearer volunteer-token' } });
    native.publisher.close();
    const told = publisherSetUp({ tokenIn: 'query' });
    told.publisher.start();
    await told.clock.advance(0);
    assert.equal(told.Socket.last().url, 'wss://broker.test/v1/ws?token=volunteer-token');
    told.publisher.close();

    Object.defineProperty(globalThis, 'navigator', { value: { product: 'Gecko', userAgent: 'Mozilla/5.0' }, configurable: true, writable: true });
    const browser = publisherSetUp();
    browser.publisher.start();
    await browser.clock.advance(0);
    assert.equal(browser.Socket.last().url, 'wss://broker.test/v1/ws?token=volunteer-token', "a browser's WebSocket ignores headers");
    assert.equal(browser.Socket.last().options, undefined);
    browser.publisher.close();
    assert.throws(() => publisherSetUp({ tokenIn: 'cookie' }), /tokenIn/);
  } finally {
    if (original) Object.defineProperty(globalThis, 'navigator', original);
    else delete globalThis.navigator;
  }
});

test("publish() returns a promise settled by the broker's answer: ack, error, or the fix's fate", async () => {
  const setup = publisherSetUp();
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  const accepted = setup.publisher.publish({ lat: 1, lon: 2, timestamp: T });
  const refused = setup.publisher.publish({ lat: 91, lon: 2, timestamp: T + 1 });
  const superseded = setup.publisher.publish({ lat: 1, lon: 2, timestamp: T });
  const [a, b] = socket.frames('publish');
  let settled = false;
  accepted.then(() => { settled = true; });
  await setup.clock.advance(0);
  assert.equal(settled, false, 'pending until the broker answers');
  socket.receive({ type: 'ack', re: a.id, seq: 41, tracking: true, watchers: 2 });
  socket.receive({ type: 'error', re: b.id, code: 'invalid-position', message: 'position.lat must be between -90 and 90' });
  assert.deepEqual(await accepted, { position: { lat: 1, lon: 2, timestamp: T }, result: 'accepted', seq: 41, audience: { tracking: true, watchers: 2 } });
  assert.deepEqual(await refused, { position: { lat: 91, lon: 2, timestamp: T + 1 }, result: 'refused', code: 'invalid-position',
    message: 'position.lat must be between -90 and 90' });
  assert.equal((await superseded).result, 'superseded');
  const pending = setup.publisher.publish({ lat: 1, lon: 2, timestamp: T + 2 });
  setup.publisher.close();
  assert.deepEqual(await pending, { position: { lat: 1, lon: 2, timestamp: T + 2 }, result: 'dropped', reason: 'the publisher stopped before its ack' });
  assert.equal((await setup.publisher.publish({ lat: 1, lon: 2, timestamp: T + 3 })).result, 'dropped');
});

test("Core Location's -1 and other absent values are left out before sending, as the Swift client leaves them out", async () => {
  const setup = publisherSetUp();
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  setup.publisher.publish({ lat: 1, lon: 2, accuracy: -1, speed: -1, heading: -1, altitude: 30, timestamp: T });
  setup.publisher.publish({ lat: 1, lon: 2, accuracy: 5, speed: 0, heading: 360, timestamp: T + 1 });
  setup.publisher.publish({ lat: 1, lon: 2, accuracy: null, speed: NaN, heading: Infinity, timestamp: T + 2 });
  setup.publisher.publish({ lat: 1, lon: 2, accuracy: 3.5, speed: 7.25, heading: 725.5, timestamp: T + 3 });
  assert.deepEqual(socket.frames('publish').map((frame) => frame.position), [
    { lat: 1, lon: 2, timestamp: T },
    { lat: 1, lon: 2, accuracy: 5, speed: 0, heading: 0, timestamp: T + 1 },
    { lat: 1, lon: 2, timestamp: T + 2 },
    { lat: 1, lon: 2, accuracy: 3.5, speed: 7.25, heading: 5.5, timestamp: T + 3 },
  ]);
  setup.publisher.close();
  assert.deepEqual(client.brokerPosition({ lat: 0, lon: 0, speed: -0.5, timestamp: 1 }), { lat: 0, lon: 0, timestamp: 1 });
  // React Native's geolocation on iOS: speed and heading -1 while standing; a browser: null.
  assert.deepEqual(client.positionFromGeolocation({ coords: { latitude: -34.6, longitude: -58.4, accuracy: 8, altitude: 12, speed: -1, heading: -1 }, timestamp: T + 0.4 }),
    { lat: -34.6, lon: -58.4, accuracy: 8, timestamp: T });
  assert.deepEqual(client.positionFromGeolocation({ coords: { latitude: -34.6, longitude: -58.4, accuracy: 8, altitude: null, speed: null, heading: null }, timestamp: T }),
    { lat: -34.6, lon: -58.4, accuracy: 8, timestamp: T });
});
