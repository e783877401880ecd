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
  renderPush();
}
