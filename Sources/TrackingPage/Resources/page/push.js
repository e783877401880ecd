// ---- Notifications (Web Push): "Notify me" ----
// Offered only where the browser can do it (a service worker, PushManager and Notification in a secure context) and
// the broker sends pushes (GET /v1/push/key answers 200); anywhere else the box stays hidden and the page is as
// without it. A push says what happened (close, arrived, on the way to the institution, delivered), never where:
// the broker puts no coordinate in it. The watch token goes only to the broker, in a header, as on the WebSocket.
const PUSH_KEY_PATH = '/v1/push/key';
const PUSH_SUBSCRIPTIONS_PATH = '/v1/push/subscriptions';
const PUSH_WORKER_PATH = '/track/push-worker.js';
// One registration, so one push subscription, per donation: a donor watching two donations in one browser gets
// both told, and stopping one leaves the other on (a browser keeps one subscription per scope).
// A valid id is letters, digits and . _ : - (DonationID): path characters as they are, ':' included.
const PUSH_SCOPE = '/track/' + encodeURIComponent(donationId).replace(/%3A/gi, ':');
// How long the page waits for the browser at each step: the worker's start, and subscribe(), which a browser
// without a reachable push service may leave pending for ever (headless Chromium does).
const PUSH_STEP_TIMEOUT_MS = 20000;

const pushView = { box: $('push'), about: $('push-about'), on: $('push-on'), off: $('push-off'), status: $('push-status') };
// offered: the box is shown; subscribed: this browser holds a subscription for the donation; busy: a click is
// being handled.
const pushState = { key: null, offered: false, subscribed: false, busy: false };

function pushSupported() {
  return window.isSecureContext === true && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

function sayPush(text) {
  setText(pushView.status, text);
}

// State changes in one place, then the buttons follow.
function setPush(changes) {
  Object.assign(pushState, changes);
  renderPush();
}

// Called by render(): the buttons follow the state; after the end of tracking there is nothing left to notify.
// A busy button is aria-disabled, not disabled, so that it keeps the keyboard's focus; when the pressed button goes
// (on becomes off), the focus moves to the one that takes its place.
function renderPush() {
  const shown = pushState.offered && !st.ended;
  if (pushView.box.hidden === shown) pushView.box.hidden = !shown;
  if (!shown) return;
  const focused = document.activeElement;
  const denied = Notification.permission === 'denied' && !pushState.subscribed;
  pushView.on.hidden = pushState.subscribed || denied;
  pushView.off.hidden = !pushState.subscribed;
  // Once on, the status says what comes; the offer's words would repeat it.
  pushView.about.hidden = pushState.subscribed;
  for (const button of [pushView.on, pushView.off]) button.setAttribute('aria-disabled', String(pushState.busy));
  if (focused === pushView.on && pushView.on.hidden && !pushView.off.hidden) pushView.off.focus();
  if (focused === pushView.off && pushView.off.hidden && !pushView.on.hidden) pushView.on.focus();
}

// A base64url public key as the bytes PushManager.subscribe takes.
function keyBytes(base64url) {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (base64url.length % 4)) % 4);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

// The broker's words for a refusal ({"error":{"code","message"}}), or the status when it sent none.
async function brokerMessage(response) {
  try {
    const body = await response.json();
    if (body && body.error && typeof body.error.message === 'string') return body.error.message;
  } catch (error) { /* not JSON: the status says enough */ }
  return 'the broker answered HTTP ' + response.status;
}

function pushRequest(method, body) {
  return fetch(PUSH_SUBSCRIPTIONS_PATH, {
    method, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + token },
    body: JSON.stringify(body),
  });
}

// The worker the subscription belongs to, once active (PushManager.subscribe refuses a registration without one).
async function activeRegistration() {
  const registration = await navigator.serviceWorker.register(PUSH_WORKER_PATH, { scope: PUSH_SCOPE });
  if (registration.active) return registration;
  const installing = registration.installing || registration.waiting;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the notification worker did not start')), PUSH_STEP_TIMEOUT_MS);
    installing.addEventListener('statechange', () => {
      if (installing.state === 'activated') { clearTimeout(timer); resolve(); }
      if (installing.state === 'redundant') { clearTimeout(timer); reject(new Error('the notification worker failed to install')); }
    });
  });
  return registration;
}

// `promise`, or an error saying `what` did not happen within `ms`.
function within(ms, what, promise) {
  let timer = null;
  const late = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(what)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function existingSubscription() {
  const registration = await navigator.serviceWorker.getRegistration(PUSH_SCOPE);
  // getRegistration finds the registration whose scope best matches; only ours (exactly this donation's) counts.
  if (!registration || registration.scope !== new URL(PUSH_SCOPE, location.href).href) return null;
  return registration.pushManager.getSubscription();
}

async function turnNotificationsOn() {
  if (pushState.busy || st.ended) return;
  setPush({ busy: true });
  let subscription = null;
  try {
    sayPush('Asking your browser for permission\u2026');
    const permission = await Notification.requestPermission();
    if (permission === 'denied') {
      sayPush('Notifications are blocked: your browser refused them for this site. You can allow them in its site settings.');
      return;
    }
    if (permission !== 'granted') {
      sayPush('Notifications were not turned on: the question was closed without an answer. Press \u201cNotify me\u201d to be asked again.');
      return;
    }
    sayPush('Turning notifications on\u2026');
    const registration = await activeRegistration();
    const subscribing = registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(pushState.key) });
    // A subscription that comes after the page gave up is dropped: the broker never heard of it.
    const late = { gaveUp: false };
    subscribing.then((made) => { if (late.gaveUp) made.unsubscribe(); }, () => {});
    try {
      subscription = await within(PUSH_STEP_TIMEOUT_MS, "your browser's push service did not answer", subscribing);
    } catch (error) {
      late.gaveUp = true;
      throw error;
    }
    const response = await pushRequest('POST', subscription);
    if (response.status !== 201) {
      const message = await brokerMessage(response);
      await subscription.unsubscribe().catch(() => {});
      sayPush('Notifications could not be turned on: ' + message + '.');
      return;
    }
    setPush({ subscribed: true });
    sayPush('Notifications are on: you will be told when the volunteer is close, has arrived, and when the donation is delivered, even with this page closed.');
  } catch (error) {
    if (subscription) await subscription.unsubscribe().catch(() => {});
    sayPush('Notifications could not be turned on: ' + (error && error.message ? error.message : String(error)) + '.');
  } finally {
    setPush({ busy: false });
  }
}

async function turnNotificationsOff() {
  if (pushState.busy) return;
  setPush({ busy: true });
  try {
    const subscription = await existingSubscription();
    let told = true;
    if (subscription) {
      // The broker first, so that it stops sending; then the browser drops the subscription.
      let response = null;
      try { response = await pushRequest('DELETE', { endpoint: subscription.endpoint }); } catch (error) { response = null; }
      told = response !== null && response.ok;
      await subscription.unsubscribe();
    }
    setPush({ subscribed: false });
    sayPush(told ? 'Notifications are off.'
      : 'Notifications are off in this browser. The broker could not be told now; it stops once the push service refuses.');
  } catch (error) {
    sayPush('Notifications could not be turned off: ' + (error && error.message ? error.message : String(error)) + '.');
  } finally {
    setPush({ busy: false });
  }
}

// At start: offer the box if the browser and the broker can both do it, and say so if this browser is already subscribed.
async function offerNotifications() {
  if (!pushSupported()) return;
  let key = '';
  let subscribed = false;
  try {
    const response = await fetch(PUSH_KEY_PATH, { cache: 'no-store', credentials: 'omit' });
    if (response.status !== 200) return; // 404: this broker sends no pushes
    const body = await response.json();
    key = body && typeof body.public_key === 'string' ? body.public_key : '';
    // An uncompressed P-256 point: 65 bytes, the first 4.
    const bytes = /^[A-Za-z0-9_-]+={0,2}$/.test(key) ? keyBytes(key.replace(/=+$/, '')) : new Uint8Array(0);
    if (bytes.length !== 65 || bytes[0] !== 4) return;
    subscribed = (await existingSubscription()) !== null;
    key = key.replace(/=+$/, '');
  } catch (error) {
    return; // the broker or the browser cannot: the page goes on without notifications
  }
  pushView.on.addEventListener('click', turnNotificationsOn);
  pushView.off.addEventListener('click', turnNotificationsOff);
  if (subscribed) sayPush('Notifications are on in this browser.');
  else if (Notification.permission === 'denied') {
    sayPush('Notifications are blocked for this site in your browser\u2019s settings.');
  }
  setPush({ key, subscribed, offered: true });
}
