extension TrackingPage {
    /// The page's script: the donor's side of docs/PROTOCOL.md in a browser. It mirrors tracker-watch
    /// (WatchRendering): the same words, formats, staleness rule, speed smoothing, backoff, and recovery with
    /// `since`. The map is Leaflet's (when the broker serves it: `L`); every fact is also text. Text goes into
    /// the page only through `textContent` (and Leaflet only gets elements or escaped text).
    static let script = #"""
        'use strict';
        (function () {
          const STALE_AFTER_MS = 60000;
          const TRAIL_LIMIT = 50;
          const EVENT_LIMIT = 60;
          const SUBSCRIBE_TIMEOUT_MS = 10000;
          const NOT_TRACKABLE_RETRY_MS = 15000;
          // ConnectionStateMachine.Policy's defaults (Sources/BrokerClient): the same reconnect rules as the apps.
          const BACKOFF_INITIAL_S = 0.5;
          const BACKOFF_CAP_S = 15;
          const BACKOFF_PATIENCE_S = 5;
          const EARTH_RADIUS = 6371008.8;
          const SPEED_WEIGHT = 0.3;
          const MIN_MOVING_SPEED = 0.5;
          const MAX_PLAUSIBLE_SPEED = 70;
          const MAX_SAMPLE_GAP_MS = 600000;
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
            channel: null, donation: null, donationState: null, tracking: false, destination: null,
            home: null, institution: null, fix: null, trail: [], speed: null, online: null, lastSeen: null,
            arrived: null, highestSeq: null, connection: { kind: 'connecting' }, ended: null, subscriptions: 0,
            resubscribeSince: null, staleAnnounced: false,
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
            if (gap < 1000 || gap > MAX_SAMPLE_GAP_MS) return null;
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
            if (!previous || distance(previous, last) < 5) return null;
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

          // ---- Frames (WatchState+Frames) ----
          function ours(channel, donation) {
            if (st.channel !== null && channel !== st.channel) return false;
            if (st.donation !== null && donation !== undefined && donation !== st.donation) return false;
            return true;
          }

          function applySubscribed(s) {
            const first = st.subscriptions === 0;
            const previousState = st.donationState, wasTracking = st.tracking, wasOnline = st.online;
            st.subscriptions += 1;
            st.channel = s.channel;
            st.donation = s.donation;
            st.home = isPoint(s.home) ? s.home : null;
            st.institution = isPoint(s.institution) ? s.institution : null;
            st.connection = { kind: 'live' };
            const words = status(s.state, s.tracking, null);
            if (first) {
              st.donationState = s.state;
              st.tracking = s.tracking === true;
              st.destination = s.destination || null;
              st.online = s.online === true;
              record('subscribed', 'Watching donation ' + s.donation + ': ' + words);
            } else {
              record('resubscribed', 'Subscribed again: ' + words);
              if (previousState !== s.state || wasTracking !== s.tracking) applyState(s.state, s.tracking === true, s.destination || null);
              if (wasOnline !== s.online) applyPresence(s.online === true, null);
            }
            const since = st.resubscribeSince;
            st.resubscribeSince = null;
            if (s.last && (since === null || s.last.seq <= since)) take(s.last.seq, s.last.position);
          }

          function take(seq, position) {
            if (!Number.isFinite(seq) || !isPoint(position) || !Number.isFinite(position.timestamp)) return;
            if (st.highestSeq !== null && seq <= st.highestSeq) return;
            st.highestSeq = seq;
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
            clearTimers();
            if (socket) {
              const ws = socket;
              socket = null;
              ws.close(1000);
            }
            record(st.ended.good ? 'ended-good' : 'ended', st.ended.summary);
            render();
          }

          // ---- The connection (tracker-watch's WatchSession) ----
          let socket = null;
          let pending = null;
          let requests = 0;
          let failures = 0;
          let subscribedOnce = false;
          let subscribeTimer = null;
          let retryTimer = null;
          let pauseTimer = null;
          let ticker = null;

          function clearTimers() {
            clearTimeout(subscribeTimer);
            clearTimeout(retryTimer);
            clearTimeout(pauseTimer);
            clearInterval(ticker);
            subscribeTimer = retryTimer = pauseTimer = null;
          }

          function socketURL() {
            const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
            return scheme + '//' + location.host + '/v1/ws?token=' + encodeURIComponent(token);
          }

          function connect() {
            retryTimer = null;
            if (st.ended) return;
            if (st.connection.kind !== 'retrying') st.connection = { kind: 'connecting' };
            let opened = false;
            let ws;
            try {
              ws = new WebSocket(socketURL());
            } catch (error) {
              lost('the browser could not open a WebSocket');
              return;
            }
            socket = ws;
            ws.addEventListener('open', () => {
              if (socket !== ws) return;
              opened = true;
              if (subscribedOnce) {
                st.resubscribeSince = st.highestSeq;
                record('reconnect', st.highestSeq !== null
                  ? 'Reconnected; asking for the positions missed while disconnected'
                  : 'Reconnected; subscribing again');
              }
              subscribe();
              render();
            });
            ws.addEventListener('message', (event) => {
              if (socket !== ws || typeof event.data !== 'string') return;
              let frame;
              try { frame = JSON.parse(event.data); } catch (error) { return; }
              if (frame && typeof frame === 'object') handle(frame);
              render();
            });
            ws.addEventListener('close', (event) => {
              if (socket !== ws) return;
              socket = null;
              pending = null;
              clearTimeout(subscribeTimer);
              clearTimeout(pauseTimer);
              if (st.ended) return;
              if (opened) lost(describeClose(event.code, event.reason), event.code);
              else diagnose();
            });
          }

          function send(frame) {
            if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
          }

          function subscribe() {
            requests += 1;
            pending = 's' + requests;
            const frame = { type: 'subscribe', id: pending, donation: donationId };
            if (st.highestSeq !== null) frame.since = st.highestSeq;
            send(frame);
            clearTimeout(subscribeTimer);
            subscribeTimer = setTimeout(() => drop('no answer to subscribe within ' + SUBSCRIBE_TIMEOUT_MS / 1000 + ' s'), SUBSCRIBE_TIMEOUT_MS);
          }

          // Gives up on the current socket and reconnects.
          function drop(reason) {
            if (!socket) return;
            const ws = socket;
            socket = null;
            pending = null;
            ws.close(1000);
            lost(reason);
          }

          // The rules of the Swift library's ConnectionStateMachine: full jitter (a delay drawn from 0 up to
          // 0.5 s doubling per failure, capped at 15 s), and at least 5 s after too many connections (4029, HTTP
          // 429) or too many refused frames (4009), which hurrying back cannot cure.
          function lost(reason, code) {
            if (st.ended) return;
            clearTimeout(subscribeTimer);
            clearTimeout(pauseTimer);
            const wasLive = st.connection.kind === 'live' || st.connection.kind === 'paused';
            if (wasLive) record('connection', 'Connection lost: ' + reason + '; reconnecting');
            failures += 1;
            const ceiling = Math.min(BACKOFF_CAP_S, BACKOFF_INITIAL_S * 2 ** Math.min(failures - 1, 30));
            const minimum = code === 4029 || code === 4009 ? BACKOFF_PATIENCE_S : 0;
            const delay = Math.max(minimum, ceiling * Math.random()) * 1000;
            st.connection = { kind: 'retrying', attempt: failures, at: Date.now() + delay, reason };
            clearTimeout(retryTimer);
            retryTimer = setTimeout(connect, delay);
            render();
          }

          // The browser hides why an upgrade failed: ask the same URL over plain HTTP, which says.
          async function diagnose() {
            let reason = 'the broker cannot be reached';
            let status = 0;
            try {
              const response = await fetch('/v1/ws?token=' + encodeURIComponent(token), { cache: 'no-store', credentials: 'omit' });
              let body = null;
              try { body = await response.json(); } catch (error) { body = null; }
              const message = body && body.error && typeof body.error.message === 'string' ? body.error.message : null;
              if (response.status === 401) {
                end({ title: 'Tracking is not available', headline: 'This link no longer works',
                  summary: 'The broker did not accept the token in this link: ' + (message || 'it was refused') +
                    '. Open the tracking link from the app again to get a fresh one.' });
                return;
              }
              if (response.status === 400) reason = 'the WebSocket could not be opened (a proxy may be in the way)';
              else if (message) reason = message;
              else reason = 'the broker answered ' + response.status;
              status = response.status;
            } catch (error) {
              reason = 'the broker cannot be reached';
            }
            lost(reason, status === 429 ? 4029 : undefined);
          }

          function describeClose(code, reason) {
            switch (code) {
              case 4001: return 'the token expired (4001)';
              case 4008: return 'the connection fell behind (4008)';
              case 1001: return (reason || 'the broker went away') + ' (1001)';
              case 1005: case 1006: return reason || 'the connection dropped';
              default: return reason ? reason + ' (' + code + ')' : 'closed with code ' + code;
            }
          }

          function refused(error) {
            const code = String(error.code);
            const message = typeof error.message === 'string' ? error.message : '';
            if (code === 'not-trackable') {
              const first = st.connection.kind !== 'paused';
              st.connection = { kind: 'paused', at: Date.now() + NOT_TRACKABLE_RETRY_MS };
              st.tracking = false;
              st.destination = null;
              if (first) record('pause', 'Tracking paused: ' + message + '; asking again regularly');
              clearTimeout(pauseTimer);
              pauseTimer = setTimeout(() => { if (socket && !st.ended) subscribe(); }, NOT_TRACKABLE_RETRY_MS);
              return;
            }
            if (code === 'unavailable' || code === 'internal' || code === 'rate-limited') {
              drop('the broker could not subscribe now (' + code + '): ' + message);
              return;
            }
            if (!subscribedOnce) {
              const summary = code === 'not-found'
                ? 'There is nothing to track for donation ' + donationId + ': it may have been delivered or cancelled already, ' +
                  'or this link belongs to another account.'
                : 'The broker refused to let you watch (' + code + '): ' + message;
              end({ title: 'Tracking is not available', headline: 'Not allowed to watch', summary });
            } else {
              end({ headline: 'Tracking ended while disconnected',
                summary: 'After reconnecting, the broker no longer lets you watch (' + code + '): ' + message +
                  '. The donation may have ended while the connection was down.' });
            }
          }

          function handle(frame) {
            switch (frame.type) {
              case 'welcome':
                if (st.connection.kind === 'connecting' || st.connection.kind === 'retrying') st.connection = { kind: 'subscribing' };
                break;
              case 'subscribed':
                if (frame.re !== undefined && frame.re === pending) {
                  pending = null;
                  clearTimeout(subscribeTimer);
                  clearTimeout(pauseTimer);
                  subscribedOnce = true;
                  failures = 0;
                }
                applySubscribed(frame);
                break;
              case 'error':
                if (frame.re !== undefined && frame.re === pending) {
                  pending = null;
                  clearTimeout(subscribeTimer);
                  refused(frame);
                } else {
                  record('error', 'The broker answered: ' + frame.message);
                }
                break;
              case 'position':
                if (ours(frame.channel)) take(frame.seq, frame.position);
                break;
              case 'state':
                if (ours(frame.channel, frame.donation)) applyState(frame.state, frame.tracking === true, frame.destination || null);
                break;
              case 'arrival':
                if (ours(frame.channel, frame.donation)) applyArrival(frame);
                break;
              case 'presence':
                if (ours(frame.channel)) applyPresence(frame.online === true, frame.lastSeen);
                break;
              case 'unsubscribed':
                if (!ours(frame.channel, frame.donation)) break;
                if (frame.reason === 'DELIVERED') st.donationState = 'DELIVERED';
                if (frame.reason === 'CANCELLED') st.donationState = 'CANCELLED';
                end(unsubscribedEnd(frame.reason));
                break;
              default:
                break; // a newer broker's frame: ignored
            }
          }

          // ---- Rendering ----
          function setText(element, text) {
            if (element.textContent !== text) element.textContent = text;
          }
          function setTone(element, tone) {
            if (element.dataset.tone !== tone) element.dataset.tone = tone;
          }

          function connectionText(now) {
            const seconds = (at) => Math.max(0, Math.ceil((at - now) / 1000));
            const c = st.connection;
            switch (c.kind) {
              case 'connecting': return ['connecting\u2026', 'warning'];
              case 'subscribing': return ['subscribing\u2026', 'warning'];
              case 'live': return ['live', 'good'];
              case 'retrying': return ['reconnecting in ' + seconds(c.at) + ' s (try ' + c.attempt + ')', 'warning'];
              case 'paused': return ['paused, asking again in ' + seconds(c.at) + ' s', 'normal'];
              default: return ['ended', 'normal'];
            }
          }

          function noticeText(now) {
            if (st.ended) return ['', 'normal'];
            if (st.connection.kind === 'retrying') return ['No connection: ' + st.connection.reason + '. Reconnecting\u2026', 'warning'];
            if (st.subscriptions === 0 && st.connection.kind !== 'paused') return ['Connecting to the broker\u2026', 'normal'];
            if (!st.tracking) return ['Location sharing is paused until the trip goes on.', 'normal'];
            if (!st.fix) return ["Waiting for the volunteer's location\u2026", 'warning'];
            if (isStale(now)) return ['No new location for over a minute: the position shown may be out of date.', 'warning'];
            if (st.online === false) return ['The volunteer is offline; the map shows the last known position.', 'warning'];
            return ['', 'normal'];
          }

          function render() {
            const now = Date.now();
            setText(view.title, 'Donation ' + (st.donation || donationId));
            const [connection, connectionTone] = connectionText(now);
            setText(view.connection, connection);
            setTone(view.connection, connectionTone);

            let headline;
            if (st.ended) headline = st.ended.headline;
            else if (st.connection.kind === 'paused') headline = 'Tracking paused';
            else headline = status(st.donationState, st.tracking, st.arrived);
            setText(view.headline, headline);
            setText(view.destination, st.destination && !st.ended ? 'Heading to: ' + place(st.destination) : '');
            const [notice, noticeTone] = noticeText(now);
            setTone(view.notice, noticeTone);
            setText(view.notice, notice);

            if (st.ended) {
              setTone(view.final, st.ended.good ? 'good' : 'warning');
              setText(view['final-title'], st.ended.title);
              setText(view['final-message'], st.ended.summary);
              view.final.hidden = false;
            } else {
              view.final.hidden = true;
            }

            const fix = st.fix;
            const target = goal();
            let metres = null;
            if (fix && isPoint(target) && st.tracking) metres = distance(fix.position, target);
            setText(view['distance-label'], st.destination ? 'Distance to ' + placeInSentence(st.destination) : 'Distance');
            setText(view.distance, metres === null ? DASH : fmt.distance(metres));
            let eta = DASH;
            if (st.arrived !== null && st.arrived === st.destination) eta = 'arrived';
            else if (metres !== null && st.speed !== null && st.speed >= MIN_MOVING_SPEED) eta = fmt.eta(metres / st.speed);
            setText(view.eta, eta);
            const stale = isStale(now);
            if (fix) {
              setText(view.age, fmt.age((now - fix.position.timestamp) / 1000) + ' ago' + (stale ? ' (stale)' : ''));
            } else {
              setText(view.age, DASH);
            }
            view.age.dataset.stale = String(stale);
            if (st.online === true) setText(view.presence, 'online');
            else if (st.online === false) {
              setText(view.presence, st.lastSeen !== null ? 'offline, seen ' + fmt.age((now - st.lastSeen) / 1000) + ' ago' : 'offline');
            } else setText(view.presence, DASH);
            const course = courseOf(st.trail);
            setText(view.heading, course === null ? DASH : fmt.course(course));
            const reported = fix && Number.isFinite(fix.position.speed) ? fix.position.speed : st.speed;
            setText(view.speed, reported === null ? DASH : fmt.speed(reported));
            setText(view.accuracy, fix ? fmt.accuracy(fix.position.accuracy) : DASH);
            setText(view.home, st.home ? (st.home.label || 'shown on the map') : DASH);
            setText(view.institution, st.institution ? (institutionName() || 'shown on the map') : DASH);
            renderMap(metres, course, stale);
          }

          // ---- The map: Leaflet, on the broker's tiles, a tile server's, or a plain background ----
          const SVG_NS = 'http://www.w3.org/2000/svg';
          function svg(tag, attributes, children) {
            const element = document.createElementNS(SVG_NS, tag);
            for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
            for (const child of children || []) element.append(child);
            return element;
          }
          function escapeText(text) {
            return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
          }
          function labelElement(text) {
            const span = document.createElement('span');
            span.textContent = text;
            return span;
          }

          const drawn = (() => {
            if (typeof L === 'undefined') {
              // No Leaflet on this broker: the facts and the description say it all, as text.
              view.map.hidden = true;
              for (const legend of document.querySelectorAll('.legend')) legend.hidden = true;
              return null;
            }
            view['map-desc'].classList.add('visually-hidden');
            const data = view.map.dataset;
            const map = L.map(view.map, { zoomControl: false, attributionControl: false, keyboard: false, maxZoom: 19, zoomSnap: 0.5 });
            if (data.tiles) {
              const options = { maxZoom: 19 };
              const minZoom = parseInt(data.minZoom, 10), maxZoom = parseInt(data.maxZoom, 10);
              // Below a file's lowest zoom Leaflet would scale down many of its tiles: a plain background there.
              if (Number.isFinite(minZoom)) { options.minNativeZoom = minZoom; options.minZoom = Math.max(0, minZoom - 2); }
              if (Number.isFinite(maxZoom)) options.maxNativeZoom = maxZoom;
              const edges = (data.bounds || '').split(',').map(Number);
              if (edges.length === 4 && edges.every(Number.isFinite)) options.bounds = L.latLngBounds([edges[1], edges[0]], [edges[3], edges[2]]);
              L.tileLayer(data.tiles, options).addTo(map);
            }
            if (data.attribution) L.control.attribution({ prefix: false }).addAttribution(escapeText(data.attribution)).addTo(map);
            L.control.scale({ imperial: false, position: 'bottomleft' }).addTo(map);

            const icon = (className, shape, size) => L.divIcon({ className: 'marker ' + className, html: shape, iconSize: [size, size] });
            const homeShape = svg('svg', { viewBox: '-15 -15 30 30', width: '30', height: '30', 'aria-hidden': 'true' }, [
              svg('path', { class: 'marker-shape', d: 'M0 -12L13 0H9V11H-9V0H-13Z' }),
              svg('path', { class: 'marker-detail', d: 'M-3 11V4H3V11' })]);
            const institutionShape = svg('svg', { viewBox: '-15 -15 30 30', width: '30', height: '30', 'aria-hidden': 'true' }, [
              svg('path', { class: 'marker-shape', d: 'M0 -13L14 -5V-2H-14V-5ZM-12 8H12V12H-12ZM-10 -1H-6V7H-10ZM-2 -1H2V7H-2ZM6 -1H10V7H6Z' })]);
            const arrow = svg('path', { class: 'marker-detail-fill', d: 'M0 -8L6 6L0 3L-6 6Z' });
            const dot = svg('circle', { class: 'marker-detail-fill', r: '4' });
            const volunteerShape = svg('svg', { viewBox: '-15 -15 30 30', width: '30', height: '30', 'aria-hidden': 'true' }, [
              svg('circle', { class: 'marker-shape', r: '12' }), arrow, dot]);
            const homeLabel = labelElement('Home'), institutionLabel = labelElement('Institution');
            const tooltip = { permanent: true, direction: 'bottom', offset: [0, 12], className: 'marker-label' };
            return {
              map, arrow, dot,
              trail: L.polyline([], { className: 'trail', interactive: false }).addTo(map),
              route: L.polyline([], { className: 'route', interactive: false }),
              ring: L.circleMarker([0, 0], { radius: 19, className: 'target-ring', fill: false, interactive: false }),
              home: L.marker([0, 0], { icon: icon('home-marker', homeShape, 30), interactive: false, keyboard: false }).bindTooltip(homeLabel, tooltip),
              institution: L.marker([0, 0], { icon: icon('institution-marker', institutionShape, 30), interactive: false, keyboard: false })
                .bindTooltip(institutionLabel, tooltip),
              institutionLabel,
              volunteer: L.marker([0, 0], { icon: icon('volunteer-marker', volunteerShape, 30), interactive: false, keyboard: false, zIndexOffset: 1000 }),
              fitted: '', userMoved: false, fitting: false, viewSet: false,
            };
          })();
          if (drawn) {
            drawn.map.on('dragstart zoomstart', () => { if (!drawn.fitting) drawn.userMoved = true; });
          }

          function show(layer, visible, latLng) {
            if (!visible) { if (drawn.map.hasLayer(layer)) layer.remove(); return; }
            if (latLng !== undefined) layer.setLatLng(latLng);
            if (!drawn.map.hasLayer(layer)) layer.addTo(drawn.map);
          }
          const ll = (p) => [p.lat, p.lon];

          function renderMap(metres, course, stale) {
            setText(view['map-desc'], describeMap(metres));
            if (!drawn) return;
            show(drawn.home, Boolean(st.home), st.home ? ll(st.home) : undefined);
            show(drawn.institution, Boolean(st.institution), st.institution ? ll(st.institution) : undefined);
            setText(drawn.institutionLabel, truncate(institutionName() || 'Institution', 24));
            drawn.trail.setLatLngs(st.trail.map(ll));
            const fix = st.fix;
            show(drawn.volunteer, Boolean(fix), fix ? ll(fix.position) : undefined);
            const element = drawn.volunteer.getElement();
            if (element) element.classList.toggle('stale', stale || !st.tracking);
            if (course !== null) {
              drawn.arrow.setAttribute('visibility', 'visible');
              drawn.dot.setAttribute('visibility', 'hidden');
              drawn.arrow.setAttribute('transform', 'rotate(' + course.toFixed(0) + ')');
            } else {
              drawn.arrow.setAttribute('visibility', 'hidden');
              drawn.dot.setAttribute('visibility', 'visible');
            }
            const target = goal();
            const targeted = isPoint(target) && !st.ended;
            show(drawn.ring, targeted, targeted ? ll(target) : undefined);
            if (targeted && fix && st.tracking) {
              drawn.route.setLatLngs([ll(fix.position), ll(target)]);
              show(drawn.route, true);
            } else {
              show(drawn.route, false);
            }
            fitTrip();
          }

          // Keeps the trip in view: home, institution and the trail, again whenever they change, unless the donor
          // moved the map themselves (then only when the volunteer leaves the view).
          function fitTrip() {
            const points = [];
            if (st.home) points.push(ll(st.home));
            if (st.institution) points.push(ll(st.institution));
            for (const p of st.trail) points.push(ll(p));
            if (points.length === 0) return;
            const key = points.map((p) => p.join(',')).join(';');
            if (key === drawn.fitted) return;
            drawn.fitted = key;
            const volunteerHidden = drawn.viewSet && st.fix && !drawn.map.getBounds().contains(ll(st.fix.position));
            if (drawn.userMoved && !volunteerHidden) return;
            drawn.fitting = true;
            // Wider at the sides: a marker's label is centred under it.
            drawn.map.fitBounds(L.latLngBounds(points), { padding: [72, 40], maxZoom: 17, animate: false });
            drawn.fitting = false;
            drawn.viewSet = true;
            drawn.userMoved = false;
          }

          function truncate(text, max) {
            return text.length > max ? text.slice(0, max - 1) + '\u2026' : text;
          }

          function describeMap(metres) {
            const places = [];
            if (st.home) places.push('your home');
            if (st.institution) places.push(institutionName() || 'the institution');
            const shown = places.length ? ' The map shows ' + places.join(' and ') + '.' : '';
            if (st.ended) return 'Tracking has ended; the volunteer is no longer shown.' + shown;
            if (!st.fix) return "The volunteer's location is not known yet." + shown;
            const target = goal();
            if (metres !== null && isPoint(target)) {
              const side = fmt.compass(bearing(target, st.fix.position));
              return 'The volunteer is ' + fmt.distance(metres) + ' ' + side + ' of ' + placeInSentence(st.destination) + '.' + shown;
            }
            return 'The map shows the last position the volunteer shared.' + shown;
          }

          // ---- Start ----
          function tick() {
            if (st.ended) return;
            const now = Date.now();
            if (!st.staleAnnounced && isStale(now)) {
              st.staleAnnounced = true;
              record('stale', 'No new location for ' + fmt.age((now - st.fix.position.timestamp) / 1000) + ': the position shown is STALE');
            }
            render();
          }

          function retryNow() {
            if (retryTimer !== null && !st.ended) {
              clearTimeout(retryTimer);
              connect();
            }
          }

          if (!token) {
            end({ title: 'Tracking is not available', headline: 'This link is incomplete',
              summary: 'The address has no token after #token=. Open the tracking link exactly as the app gave it.' });
            return;
          }
          window.addEventListener('online', retryNow);
          document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible') retryNow(); });
          ticker = setInterval(tick, 1000);
          render();
          connect();
        })();
        """#
}
