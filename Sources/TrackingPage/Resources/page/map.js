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
