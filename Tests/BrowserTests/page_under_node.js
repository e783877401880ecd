'use strict';
// Runs the tracking page's served script under node, in a small fake browser (elements, location, history,
// sessionStorage, WebSocket, timers and the clock), and prints what the page did as one JSON object. Used by
// PageSharedNumbersTests (Tests/TrackingPageTests): it hands the script with changed shared numbers, and checks that the page's
// staleness, trail, backoff, subscribe timeout and distances follow them, so the page reads the numbers the broker
// declares and keeps no copies of its own. The script is an ES module importing the JavaScript client
// (clients/javascript/location-broker-client.js): both run as modules in the fake browser's context.
//
// usage: node --experimental-vm-modules page_under_node.js SCRIPT.js
// The trip: a donation on the way to the donor's home 1 km north of the first fix; fixes every 2 s moving north.

const fs = require('fs');
const path = require('path');
const vm = require('vm');

const script = fs.readFileSync(process.argv[2], 'utf8');
const client = fs.readFileSync(path.join(__dirname, '../../clients/javascript/location-broker-client.js'), 'utf8');

let now = 1_700_000_000_000;
const timers = [];
let nextTimer = 1;

function element(id) {
  const children = [];
  const node = {
    id, textContent: '', hidden: false, dataset: {}, children,
    classList: { add() {}, remove() {}, toggle() {} },
    append(...items) { for (const item of items) { item.parent = node; children.push(item); } },
    remove() { if (node.parent) node.parent.children.splice(node.parent.children.indexOf(node), 1); },
    get firstElementChild() { return children[0]; },
  };
  return node;
}
const elements = {};
const document = {
  getElementById(id) { return elements[id] || (elements[id] = element(id)); },
  createElement(tag) { return element(tag); },
  createTextNode(text) { return { textContent: text }; },
  querySelectorAll() { return []; },
  addEventListener() {},
  visibilityState: 'visible',
};
const sockets = [];
class WebSocket {
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    this.listeners = {};
    sockets.push(this);
  }
  addEventListener(type, listener) { (this.listeners[type] = this.listeners[type] || []).push(listener); }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() { this.readyState = 3; }
  fire(type, event) { for (const listener of this.listeners[type] || []) listener(event || {}); }
}
WebSocket.OPEN = 1;

class Clock extends Date {
  static now() { return now; }
}
const context = {
  document, WebSocket, Date: Clock, JSON, Math: Object.assign(Object.create(Math), { random: () => 1 - 1e-12 }),
  URLSearchParams, Number, String, Object, Array, Boolean, encodeURIComponent, decodeURIComponent, parseInt,
  location: { pathname: '/track/d-1', hash: '#token=t', search: '', protocol: 'http:', host: 'broker.test' },
  history: { replaceState() {} },
  sessionStorage: { setItem() {}, getItem() { return null; }, removeItem() {} },
  window: { addEventListener() {} },
  fetch: () => new Promise(() => {}),
  setTimeout(callback, delay) { const id = nextTimer++; timers.push({ id, callback, at: now + delay, delay }); return id; },
  clearTimeout(id) { const i = timers.findIndex((t) => t.id === id); if (i >= 0) timers.splice(i, 1); },
  setInterval(callback, delay) { const id = nextTimer++; timers.push({ id, callback, at: now + delay, delay, every: delay }); return id; },
  clearInterval(id) { context.clearTimeout(id); },
};
vm.createContext(context);

// Lets the promises the page and the client wait on settle.
async function settle() {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
}

async function main() {
const clientModule = new vm.SourceTextModule(client, { context, identifier: 'location-broker-client.js' });
const page = new vm.SourceTextModule(script, { context, identifier: 'tracking-page.js' });
await page.link(() => clientModule);
await page.evaluate();
await settle();

const text = (id) => document.getElementById(id).textContent;
const events = () => document.getElementById('events').children.map((item) => item.children[1].textContent);
// Lets time pass to `until`, running the timers that fall due, in order.
async function advance(until) {
  for (;;) {
    timers.sort((a, b) => a.at - b.at);
    const due = timers[0];
    if (!due || due.at > until) break;
    now = due.at;
    if (due.every) due.at += due.every; else timers.shift();
    due.callback();
    await settle();
  }
  now = until;
}
const receive = (socket, frame) => socket.fire('message', { data: JSON.stringify(frame) });
const welcome = (socket) => receive(socket, { type: 'welcome', heartbeat: 30, identity: 'watch-link d-1' });

const report = {};
const home = { lat: 0.009, lon: 0, label: 'Home' };
const nextTimeout = () => timers.filter((t) => !t.every).sort((a, b) => a.at - b.at)[0];
let socket = sockets[0];
socket.readyState = 1;
socket.fire('open');
welcome(socket);
// No answer to subscribe: the page gives up on the socket after the subscribe timeout.
report.subscribeTimeoutMs = nextTimeout().delay;
await advance(nextTimeout().at);
report.gaveUp = socket.readyState === 3;
// Each failed attempt waits the backoff (random() is just below 1: the delay is the ceiling).
report.retryDelaysMs = [];
for (let attempt = 0; attempt < 8; attempt += 1) {
  report.retryDelaysMs.push(Math.round(nextTimeout().delay));
  await advance(nextTimeout().at);
  socket = sockets[sockets.length - 1];
  socket.readyState = 1;
  socket.fire('open');
  socket.fire('close', { code: 1006, reason: '' });
}
// Too many connections (4029): the patience, however short the backoff.
await advance(nextTimeout().at);
socket = sockets[sockets.length - 1];
context.Math.random = () => 0;
socket.readyState = 1;
socket.fire('open');
socket.fire('close', { code: 4029, reason: 'too many connections' });
report.patienceDelayMs = Math.round(nextTimeout().delay);

// A live trip: subscribed, then a fix every 2 s, 20 m further north each time, towards home.
await advance(nextTimeout().at);
socket = sockets[sockets.length - 1];
socket.readyState = 1;
socket.fire('open');
welcome(socket);
const request = socket.sent.find((frame) => frame.type === 'subscribe');
receive(socket, { type: 'subscribed', re: request.id, channel: 'c', donation: 'd-1', state: 'BEING-LOOKED-FOR', tracking: true,
  destination: 'home', online: true, home, institution: { lat: 1, lon: 1, name: 'Inst' } });
for (let seq = 1; seq <= 5; seq += 1) {
  if (seq > 1) await advance(now + 2000);
  receive(socket, { type: 'position', channel: 'c', seq, position: { lat: (seq - 1) * 0.00018, lon: 0, timestamp: now } });
}
report.distance = text('distance');
report.eta = text('eta');
report.heading = text('heading');
// Staleness: when the page first marks the last fix stale, and says so in the log.
const last = now;
report.staleAfterMs = null;
for (let t = now; t <= now + 600_000; t += 250) {
  await advance(t);
  if (text('age').includes('(stale)')) { report.staleAfterMs = t - last; break; }
}
report.staleEvent = events().some((e) => e.startsWith('No new location for'));
report.events = events();
console.log(JSON.stringify(report));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
