// Runs the React Native example of docs/CLIENTS.md (as tsc compiled it) against the live broker, in node, with
// stand-ins for what a phone provides: React Native's AppState and NetInfo (the client's test fakes), a
// Geolocation the run moves, `navigator.product` 'ReactNative', and the `ws` package as the global WebSocket (it
// takes headers as a third argument, as React Native's does), pointed at the broker instead of the example's
// host. It checks what the example promises: the token in a header, -1 left out, the donor's connection closed in
// the background and back with what it missed, no attempt while offline and one at once when back, and nothing
// left running after the screen's cleanup.
// Usage: node run-react-native-example.mjs COMPILED_EXAMPLE (the environment of setup.cjs)
import { pathToFileURL } from 'node:url';
import setupModule from './setup.cjs';
import { FakeAppState, FakeNetInfo } from './fakes.js';

const setup = setupModule.tripSetup();
const AppState = new FakeAppState('active');
const NetInfo = new FakeNetInfo();
const Geolocation = {
  watchers: new Map(),
  watchPosition(success) { const id = this.watchers.size + 1; this.watchers.set(id, success); return id; },
  clearWatch(id) { this.watchers.delete(id); },
  /// The phone gets a fix, with Core Location's -1 for an unknown speed and heading.
  move(latitude, longitude) {
    const fix = { coords: { latitude, longitude, altitude: null, accuracy: 6, altitudeAccuracy: null, heading: -1, speed: -1 }, timestamp: Date.now() };
    for (const success of this.watchers.values()) success(fix);
  },
};
globalThis.reactNativeStandIns = { AppState, NetInfo, Geolocation };
Object.defineProperty(globalThis, 'navigator', { value: { product: 'ReactNative' }, configurable: true, writable: true });

const sockets = [];
const received = [];
const brokerBase = setup.url.replace(/\/v1\/ws$/, '');
globalThis.WebSocket = class ReactNativeWebSocket extends setup.WebSocket {
  constructor(url, protocols, options) {
    super(url.replace('wss://broker.example.org', brokerBase), protocols, options);
    sockets.push({ url, headers: options && options.headers, socket: this });
    this.addEventListener('message', (event) => received.push(JSON.parse(event.data)));
  }
};

const positions = [];
let ended = null;
globalThis.screen = { moveVehicle: (position) => positions.push(position), finish: (end) => { ended = end; } };
globalThis.backend = { donorToken: async () => setup.donorToken, volunteerToken: async () => setup.volunteerToken };
globalThis.log = (...values) => console.log('the example logged:', ...values);

async function until(what, condition, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('not within ' + ms + ' ms: ' + what);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const open = () => sockets.filter((entry) => entry.socket.readyState === 1).length;
const acks = () => received.filter((frame) => frame.type === 'ack').length;

async function run(file) {
  const example = await import(pathToFileURL(file).href);
  const stopWatching = example.watchDonation(setup.donation);
  const stopSharing = example.shareLocation();
  await until('the donor subscribed and the volunteer welcomed', () => received.some((frame) => frame.type === 'subscribed') &&
    received.filter((frame) => frame.type === 'welcome').length === 2);

  Geolocation.move(-34.6037, -58.3816);
  await until('the first fix on the donor\'s screen', () => positions.length === 1);
  if (Object.keys(positions[0]).sort().join() !== 'accuracy,lat,lon,timestamp') throw new Error('the fix kept absent values: ' + JSON.stringify(positions[0]));

  // The donor's app goes to the background: its connection is closed; the volunteer's stays and publishes.
  const before = sockets.length;
  AppState.become('background');
  await until('the donor\'s connection closed in the background', () => open() === 1);
  Geolocation.move(-34.6000, -58.3900);
  await until('the fix published in the background acknowledged', () => acks() === 2);
  if (sockets.length !== before || positions.length !== 1) throw new Error('something connected or arrived in the background');
  AppState.become('active');
  await until('the fix published meanwhile on the donor\'s screen after the foreground', () => positions.length === 2);

  // No network: both connections dropped, nothing attempted; back: both at once, the fix kept sent.
  NetInfo.change(false);
  await until('no connection while offline', () => open() === 0);
  const offline = sockets.length;
  Geolocation.move(-34.5950, -58.4000);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  if (sockets.length !== offline) throw new Error('an attempt was made while offline');
  NetInfo.change(true, 'cellular');
  await until('the fix kept while offline on the donor\'s screen', () => positions.length === 3, 5000);

  await setup.deliver();
  await until('the end on the donor\'s screen', () => ended !== null);
  if (ended.kind !== 'unsubscribed' || ended.reason !== 'DELIVERED') throw new Error('the watch ended ' + JSON.stringify(ended));
  stopWatching();
  stopSharing();
  if (AppState.listeners.length !== 0 || NetInfo.listeners.length !== 0 || Geolocation.watchers.size !== 0) {
    throw new Error('the cleanups left something followed');
  }
  await until('every socket closed after the cleanups', () => open() === 0);
  for (const entry of sockets) {
    if (entry.url.includes('token=') || !entry.headers || !/^Bearer /.test(entry.headers.Authorization)) {
      throw new Error('a connection without the token in its header: ' + entry.url);
    }
  }
  return sockets.length + ' connections, each with the token in its header; three fixes seen by the donor (background, offline), ended ' + ended.reason;
}

setupModule.finish('the React Native example', run(process.argv[2]));
