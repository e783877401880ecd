// The tracking page's service worker, served at /track/push-worker.js and registered by the page (push.js) with the
// scope of one donation's page. It shows the broker's pushes as notifications and, on a click, brings the donation's
// tracking page forward. It fetches nothing and keeps nothing: a push says what happened, never where (the broker
// puts no coordinate in one), and the watch token never reaches this worker.
'use strict';

// One function, so that nothing of the worker is a global.
(function () {
const TRACK_PREFIX = '/track/';
const DONATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const FALLBACK_TITLE = 'Your donation';

// The donation's tracking page on this origin, with no token: an open tab keeps its own; a new one needs the app's link.
function pageOf(donation) {
  // A valid id (DONATION_ID) is path characters as they are: the page's address is /track/<id>, ':' included.
  return new URL(TRACK_PREFIX + donation, self.location.origin).href;
}

// The page a click opens: the push's `url` only when it is a tracking page of this origin, else the donation's.
function clickTarget(message, donation) {
  if (message && typeof message.url === 'string') {
    try {
      const url = new URL(message.url, self.location.origin);
      if (url.origin === self.location.origin && url.pathname.startsWith(TRACK_PREFIX) && !url.search && !url.hash) return url.href;
    } catch (error) { /* not a URL: use the donation's page */ }
  }
  return donation ? pageOf(donation) : new URL(self.registration.scope).href;
}

function text(value, fallback) {
  return typeof value === 'string' && value.trim() ? value : fallback;
}

// The browser shows a generic notice for a push that shows none (userVisibleOnly): every push shows one, even an
// unreadable one.
async function showPush(data) {
  let message = null;
  try { message = data ? data.json() : null; } catch (error) { message = null; }
  if (message === null || typeof message !== 'object') message = null;
  const donation = message && typeof message.donation === 'string' && DONATION_ID.test(message.donation) ? message.donation : null;
  const tag = text(message && message.tag, donation ? 'donation-' + donation : 'donation');
  await self.registration.showNotification(text(message && message.title, FALLBACK_TITLE), {
    body: text(message && message.body, ''),
    tag,
    renotify: true,
    data: { url: clickTarget(message, donation) },
  });
  // Tracking is over: nothing more will come for this donation, so the subscription goes (the notification stays).
  if (message && message.type === 'tracking.ended') {
    const subscription = await self.registration.pushManager.getSubscription();
    if (subscription) await subscription.unsubscribe();
  }
}

async function focusOrOpen(url) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of windows) {
    if (client.url.split('#')[0] === url && 'focus' in client) return client.focus();
  }
  return self.clients.openWindow(url);
}

// A new version takes over at once: it handles no fetch, so no page depends on the old one.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('push', (event) => event.waitUntil(showPush(event.data)));
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = event.notification.data && typeof event.notification.data.url === 'string'
    ? event.notification.data.url : new URL(self.registration.scope).href;
  event.waitUntil(focusOrOpen(url));
});
})();
