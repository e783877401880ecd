// The volunteer's publisher under node: every fix until its ack, but no queue; the newest after a reconnect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VolunteerPublisher, DEFAULTS } from '../location-broker-client.js';
import { FakeClock, socketClass, recorder } from './fakes.js';

function setUp(options = {}) {
  const clock = new FakeClock();
  const Socket = socketClass();
  const publisher = new VolunteerPublisher(Object.assign({
    url: 'wss://broker.test/v1/ws', WebSocket: Socket, timers: clock, random: () => 0.5, token: async () => 'volunteer-token',
  }, options));
  const seen = recorder(publisher, ['connection', 'audience', 'fix', 'stopped']);
  return { clock, Socket, publisher, seen };
}

const T = 1_700_000_000_000;
const fix = (timestamp) => ({ lat: -34.6, lon: -58.4, timestamp });
const outcomes = (seen) => seen.filter(([type]) => type === 'fix').map(([, detail]) => [detail.position.timestamp, detail.result]);
const ack = (socket, frame, extra = {}) => socket.receive(Object.assign({ type: 'ack', re: frame.id, tracking: true, watchers: 1, seq: 100 }, extra));

test('a fix stays pending until its ack; after a reconnect only the newest one not acknowledged is sent', async () => {
  const setup = setUp();
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  setup.publisher.publish(fix(T + 1000)); // before welcome: waits
  socket.welcome();
  const [first] = socket.frames('publish');
  assert.equal(first.position.timestamp, T + 1000, 'sent as soon as the connection is welcomed');
  ack(socket, first);
  setup.publisher.publish(fix(T + 2000));
  setup.publisher.publish(fix(T + 3000));
  assert.equal(socket.frames('publish').length, 3);
  // The path dies before their acks.
  socket.serverClose(1006);
  setup.publisher.publish(fix(T + 4000)); // while disconnected: replaces the one kept
  setup.publisher.publish(fix(T + 3500)); // older than one handed over: never sent
  await setup.clock.advance(setup.clock.next().delay);
  const again = setup.Socket.last();
  again.welcome();
  const resent = again.frames('publish');
  assert.deepEqual(resent.map((frame) => frame.position.timestamp), [T + 4000], 'only the newest, once');
  ack(again, resent[0], { seq: 101 });
  assert.deepEqual(outcomes(setup.seen), [[T + 1000, 'accepted'], [T + 2000, 'superseded'], [T + 3000, 'superseded'], [T + 3500, 'superseded'],
    [T + 4000, 'accepted']]);
  setup.publisher.close();
  assert.equal(setup.clock.pending, 0, 'no timer left after close()');
});

test('a missing ack means a dead path: the connection is replaced at once and the fix sent again', async () => {
  const setup = setUp();
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  setup.publisher.publish(fix(setup.clock.now()));
  await setup.clock.advance(DEFAULTS.ackTimeoutMs - 1);
  assert.equal(socket.closedWith, undefined);
  await setup.clock.advance(1);
  assert.equal(socket.closedWith, 1000);
  await setup.clock.advance(DEFAULTS.minimumAttemptGapMs);
  const again = setup.Socket.last();
  assert.notEqual(again, socket, 'reconnected within the attempt gap, not after a backoff');
  again.welcome();
  assert.equal(again.frames('publish').length, 1);
  setup.publisher.close();
});

test('a fix kept too long while disconnected is dropped, not sent', async () => {
  const setup = setUp();
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.open();
  socket.serverClose(1006);
  setup.publisher.publish(fix(setup.clock.now()));
  setup.publisher.networkLost();
  await setup.clock.advance(DEFAULTS.maximumFixAgeMs + 1);
  setup.publisher.networkAvailable();
  await setup.clock.advance(0);
  setup.Socket.last().welcome();
  assert.equal(setup.Socket.last().frames('publish').length, 0);
  assert.deepEqual(outcomes(setup.seen), [[1_700_000_000_000, 'dropped']]);
  setup.publisher.close();
});

test('refusals are reported and not sent again; the audience is told when it changes', async () => {
  const setup = setUp();
  setup.publisher.start();
  await setup.clock.advance(0);
  const socket = setup.Socket.last();
  socket.welcome();
  setup.publisher.publish(fix(1000));
  setup.publisher.publish(fix(2000));
  setup.publisher.publish(fix(3000));
  const [a, b, c] = socket.frames('publish');
  socket.receive({ type: 'error', re: a.id, code: 'rate-limited', message: 'slow down' });
  ack(socket, b, { tracking: false, watchers: 0, seq: undefined, reason: 'no-trackable-donation' });
  ack(socket, c, { tracking: false, watchers: 0, seq: undefined, reason: 'no-trackable-donation' });
  const fixes = setup.seen.filter(([type]) => type === 'fix').map(([, detail]) => detail);
  assert.equal(fixes[0].result, 'refused');
  assert.equal(fixes[0].code, 'rate-limited');
  assert.deepEqual(fixes[1].audience, { tracking: false, watchers: 0, reason: 'no-trackable-donation' });
  assert.equal(setup.seen.filter(([type]) => type === 'audience').length, 1, 'told once, while it stays the same');
  setup.publisher.close();
});

test('close() reports every pending fix dropped and leaves nothing running', async () => {
  const setup = setUp();
  setup.publisher.start();
  await setup.clock.advance(0);
  setup.Socket.last().welcome();
  setup.publisher.publish(fix(1000));
  setup.publisher.close();
  assert.deepEqual(outcomes(setup.seen), [[1000, 'dropped']]);
  assert.equal(setup.clock.pending, 0);
  assert.equal(setup.Socket.last().readyState, 3);
  assert.deepEqual(setup.seen.filter(([type]) => type === 'stopped').map(([, detail]) => detail), [{ reason: 'stopped' }]);
});
