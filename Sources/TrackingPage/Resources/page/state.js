// The numbers every donor's view agrees on (staleness, trail, speed smoothing, reconnect backoff, Earth radius:
// STALE_AFTER_MS, BACKOFF_INITIAL_S, ...) are not written here: the broker declares them before this file from
// TrackingRules' DonorViewRules (TrackingPage+Constants.swift), the numbers tracker-watch and BrokerClient use.
// The connection is the JavaScript client's DonationWatcher (clients/javascript), imported before this file.
const EVENT_LIMIT = 60;
const DASH = '\u2014';

const $ = (id) => document.getElementById(id);
const view = {};
for (const id of ['title', 'connection', 'headline', 'destination', 'notice', 'final', 'final-title', 'final-message',
  'distance', 'distance-label', 'eta', 'age', 'presence', 'heading', 'speed', 'accuracy', 'home', 'institution',
  'events', 'map', 'map-desc']) {
  view[id] = $(id);
}

const donationId = decodeURIComponent(location.pathname.replace(/\/+$/, '').split('/').pop() || '');
// The watch link's token leaves the address bar and the history entry as soon as it is read, so that
// neither a screenshot, a copied address nor the browser's history shows it. It stays in this tab's
// sessionStorage so that a reload (or a phone that discarded the tab) keeps tracking; closing the tab,
// or the end of tracking, forgets it.
const TOKEN_KEY = 'watch-token:' + donationId;
const token = (() => {
  const fromLink = new URLSearchParams(location.hash.replace(/^#/, '')).get('token') || '';
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  try {
    if (fromLink) sessionStorage.setItem(TOKEN_KEY, fromLink);
    return fromLink || sessionStorage.getItem(TOKEN_KEY) || '';
  } catch (error) {
    return fromLink;
  }
})();
function forgetToken() {
  try { sessionStorage.removeItem(TOKEN_KEY); } catch (error) { /* storage unavailable: nothing kept */ }
}

// Everything the donor knows about the trip (tracker-watch's WatchState).
const st = {
  donation: null, donationState: null, tracking: false, destination: null,
  home: null, institution: null, fix: null, trail: [], speed: null, online: null, lastSeen: null,
  arrived: null, connection: { kind: 'connecting' }, ended: null, subscriptions: 0, staleAnnounced: false,
};

// ---- Words and numbers (WatchFormat, DonationWords) ----
const fmt = {
  distance(m) {
    if (!Number.isFinite(m) || m < 0) return DASH;
    const rounded = m < 100 ? Math.round(m) : Math.round(m / 10) * 10;
    if (rounded < 1000) return rounded + ' m';
    const tenths = Math.round(m / 100);
    if (tenths < 100) return Math.floor(tenths / 10) + '.' + (tenths % 10) + ' km';
    return Math.round(m / 1000) + ' km';
  },
  speed(mps) { return Number.isFinite(mps) && mps >= 0 ? Math.round(mps * 3.6) + ' km/h' : DASH; },
  eta(s) {
    if (!Number.isFinite(s) || s < 0) return DASH;
    if (s < 60) return '< 1 min';
    const minutes = Math.ceil(s / 60);
    if (minutes < 60) return minutes + ' min';
    const rest = minutes % 60;
    return Math.floor(minutes / 60) + ' h ' + (rest < 10 ? '0' : '') + rest + ' min';
  },
  age(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min';
    const minutes = Math.floor((s % 3600) / 60);
    return Math.floor(s / 3600) + ' h' + (minutes ? ' ' + minutes + ' min' : '');
  },
  compass(degrees) {
    const names = ['north', 'north-east', 'east', 'south-east', 'south', 'south-west', 'west', 'north-west'];
    const normalised = ((degrees % 360) + 360) % 360;
    return names[Math.floor((normalised + 22.5) / 45) % 8];
  },
  course(degrees) { return fmt.compass(degrees) + ' (' + ((Math.round(degrees) % 360) + 360) % 360 + '\u00b0)'; },
  accuracy(m) { return Number.isFinite(m) && m >= 0 ? '\u00b1' + fmt.distance(m) : DASH; },
  clock(ms) {
    const d = new Date(ms);
    const two = (n) => (n < 10 ? '0' : '') + n;
    return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds());
  },
};

function status(state, tracking, arrived) {
  switch (state) {
    case 'BEING-LOOKED-FOR': return arrived === 'home' ? 'Arrived at your home' : 'On the way to your home';
    case 'BEING-TAKEN-TO': return arrived === 'institution' ? 'Arrived at the institution' : 'On the way to the institution';
    case 'PICKED-BY-VOLUNTEER': return 'Picked up \u2014 waiting for your confirmation (paused)';
    case 'DELIVERED-BY-DONOR': return 'Handed over \u2014 waiting for the volunteer to confirm (paused)';
    case 'CREATED': return 'Not on the way yet (paused)';
    case 'DELIVERED': return 'Delivered to the institution';
    case 'CANCELLED': return 'Cancelled';
    default: return 'Connecting to the broker\u2026';
  }
}
function institutionName() {
  const name = st.institution && typeof st.institution.name === 'string' ? st.institution.name.trim() : '';
  return name || null;
}
function place(destination) {
  if (destination === 'home') {
    const label = st.home && typeof st.home.label === 'string' ? st.home.label.trim() : '';
    return label ? 'Your home, ' + label : 'Your home';
  }
  return institutionName() || 'The institution';
}
function placeInSentence(destination) {
  return destination === 'home' ? 'your home' : institutionName() || 'the institution';
}

// ---- Geometry (Geodesy) ----
const rad = (d) => d * Math.PI / 180;
function distance(a, b) {
  const dPhi = rad(b.lat - a.lat), dLambda = rad(b.lon - a.lon);
  const h = Math.sin(dPhi / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLambda / 2) ** 2;
  return 2 * EARTH_RADIUS * Math.atan2(Math.sqrt(h), Math.sqrt(1 - h));
}
function bearing(a, b) {
  const dLambda = rad(b.lon - a.lon);
  const y = Math.sin(dLambda) * Math.cos(rad(b.lat));
  const x = Math.cos(rad(a.lat)) * Math.sin(rad(b.lat)) - Math.sin(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.cos(dLambda);
  return ((Math.atan2(y, x) * 180 / Math.PI) % 360 + 360) % 360;
}
function goal() {
  if (st.destination === 'home') return st.home;
  if (st.destination === 'institution') return st.institution;
  return null;
}
function isPoint(p) {
  return p && typeof p === 'object' && Number.isFinite(p.lat) && Number.isFinite(p.lon);
}

// ---- Speed (SpeedSmoother) ----
function speedSample(previous, current) {
  if (Number.isFinite(current.speed) && current.speed >= 0) return current.speed;
  if (!previous) return null;
  const gap = current.timestamp - previous.timestamp;
  if (gap < MIN_SAMPLE_GAP_MS || gap > MAX_SAMPLE_GAP_MS) return null;
  return distance(previous, current) / (gap / 1000);
}
function addSpeed(sample) {
  if (!Number.isFinite(sample) || sample < 0 || sample > MAX_PLAUSIBLE_SPEED) return;
  st.speed = st.speed === null ? sample : SPEED_WEIGHT * sample + (1 - SPEED_WEIGHT) * st.speed;
}
function courseOf(trail) {
  const last = trail[trail.length - 1];
  if (!last) return null;
  if (Number.isFinite(last.heading)) return last.heading;
  const previous = trail[trail.length - 2];
  if (!previous || distance(previous, last) < MIN_COURSE_DISTANCE) return null;
  return bearing(previous, last);
}
function isStale(now) {
  return st.tracking && st.fix !== null && now - st.fix.position.timestamp > STALE_AFTER_MS;
}

// ---- The event log: an ARIA live region, appended to and never rewritten ----
function record(kind, text) {
  const now = Date.now();
  const item = document.createElement('li');
  item.dataset.kind = kind;
  const time = document.createElement('time');
  time.dateTime = new Date(now).toISOString();
  time.textContent = fmt.clock(now);
  item.append(time, document.createTextNode(text));
  view.events.append(item);
  while (view.events.children.length > EVENT_LIMIT) view.events.firstElementChild.remove();
}

// ---- The watcher's events (WatchState+Frames): which frames are ours, seqs seen, `since` are the watcher's ----
// The first subscription: what the broker says of the donation. Later ones tell only what changed (applyState...).
function applySubscribed(facts) {
  st.subscriptions += 1;
  st.donation = facts.donation;
  st.home = isPoint(facts.home) ? facts.home : null;
  st.institution = isPoint(facts.institution) ? facts.institution : null;
  st.connection = { kind: 'live' };
  st.donationState = facts.state;
  st.tracking = facts.tracking;
  st.destination = facts.destination;
  // `online` is null while the trip is paused: presence is told again with the resume.
  st.online = facts.online;
  record('subscribed', 'Watching donation ' + facts.donation + ': ' + status(facts.state, facts.tracking, null));
}

function take(seq, position) {
  if (!Number.isFinite(seq) || !isPoint(position) || !Number.isFinite(position.timestamp)) return;
  const previous = st.fix ? st.fix.position : null;
  const sample = speedSample(previous, position);
  if (sample !== null) addSpeed(sample);
  if (st.staleAnnounced && previous) {
    record('fresh', 'Location updates again (after ' + fmt.age((position.timestamp - previous.timestamp) / 1000) + ')');
  } else if (!previous) {
    record('first-fix', "The volunteer's location is now shown");
  }
  st.staleAnnounced = false;
  st.fix = { seq, position, receivedAt: Date.now() };
  st.trail.push(position);
  if (st.trail.length > TRAIL_LIMIT) st.trail.splice(0, st.trail.length - TRAIL_LIMIT);
}

function applyState(state, tracking, destination) {
  const wasTracking = st.tracking;
  st.donationState = state;
  st.tracking = tracking;
  if (destination !== st.destination) st.arrived = null;
  st.destination = destination;
  const words = status(state, tracking, st.arrived);
  if (wasTracking && !tracking) record('pause', 'Tracking paused: ' + words.replace(/ \(paused\)$/, ''));
  else if (!wasTracking && tracking) record('resume', 'Tracking resumed: ' + words);
  else record('state', words);
}

function applyArrival(arrival) {
  if (arrival.place === st.destination) st.arrived = arrival.place;
  record('arrival', 'The volunteer has arrived at ' + placeInSentence(arrival.place) + ' (' + fmt.distance(arrival.distance) + ' away)');
}

function applyPresence(online, lastSeen) {
  const changed = st.online !== online;
  st.online = online;
  if (Number.isFinite(lastSeen)) st.lastSeen = lastSeen;
  if (changed) record('presence', online ? 'The volunteer is online' : 'The volunteer went offline');
}

// ---- How tracking ends (WatchEnd) ----
function unsubscribedEnd(reason) {
  switch (reason) {
    case 'DELIVERED': {
      const name = institutionName();
      return { good: true, headline: 'Delivered to the institution',
        summary: (name ? 'Delivered to ' + name : 'Delivered to the institution') + '. Thank you!' };
    }
    case 'CANCELLED': return { headline: 'Cancelled', summary: 'The donation was cancelled; tracking has ended.' };
    case 'volunteer-changed': return { headline: 'Access revoked: the volunteer changed',
      summary: 'The volunteer no longer carries this donation (dropped or reassigned): access to their location was revoked.' };
    case 'deleted': return { headline: 'Donation deleted', summary: 'The donation was deleted; tracking has ended.' };
    default: return { headline: 'Tracking stopped', summary: 'Tracking stopped.' };
  }
}

function end(how) {
  if (st.ended) return;
  st.ended = Object.assign({ title: 'Tracking has ended', good: false }, how);
  forgetToken();
  st.connection = { kind: 'closed' };
  st.tracking = false;
  st.destination = null;
  // Location is shared only while the trip is on: once it ends, the volunteer is shown no more.
  st.fix = null;
  st.trail = [];
  st.speed = null;
  st.online = null;
  clearInterval(ticker);
  watcher.close();
  record(st.ended.good ? 'ended-good' : 'ended', st.ended.summary);
  render();
}
