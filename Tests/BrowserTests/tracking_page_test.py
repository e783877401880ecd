#!/usr/bin/env python3
"""The tracking page in a real browser: headless Chromium, a live broker and a simulated volunteer.

Run by scripts/browser-test, which builds the broker and installs Chromium and the `websockets` package.
This script starts location-broker on a free 127.0.0.1 port with temporary secrets and database, creates a
donation through the backend API, asks it for the donor's watch link (POST /v1/donations/d-1/watch-token),
opens http://127.0.0.1:PORT/track/d-1#token=... in Chromium (driven over the Chrome DevTools Protocol), and
plays a volunteer over the WebSocket and the OwnTracks endpoint. It reads the page's text after each step:
the token must be gone from the address bar and the history once the page has read it, distance and state
must change as positions and donation changes arrive, the page must keep tracking after a reload and
reconnect after a broker restart, and it must say that tracking ended after DELIVERED. The broker serves a
synthetic MBTiles file (make_mbtiles.py) as map_tiles_file: Leaflet must draw the map with tiles loaded from
the broker's /tiles/..., and no resource may come from another host. Last, a broker with an empty
leaflet_folder must log one warning and its page must still track, without the street map; and a broker with
map_tiles_url must have the page load tiles from that server (another origin), send it no Referer, and show
the attribution as text. Screenshots go to --out. Every wait is bounded; it exits 1 on the first failed check
and prints what the page showed.
"""

import argparse
import asyncio
import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import websockets

HOST = "127.0.0.1"
DONATION = "d-1"
DONOR = "donor@example.org"
VOLUNTEER = "vol@example.org"
HOME = {"lat": -34.6037, "lon": -58.3816, "label": "Av. Corrientes 1234"}
INSTITUTION = {"lat": -34.5875, "lon": -58.4206, "name": "Caritas Palermo"}
EARTH_RADIUS = 6371008.8
WAIT_SECONDS = 20
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
DESKTOP = {"width": 1280, "height": 860, "deviceScaleFactor": 1, "mobile": False}


class CheckFailed(Exception):
    pass


def log(message):
    print(message, flush=True)


def destination(lat, lon, bearing, distance):
    """The point `distance` metres from (lat, lon) along `bearing` degrees (as Geodesy.destination)."""
    delta = distance / EARTH_RADIUS
    theta = math.radians(bearing)
    phi1, lambda1 = math.radians(lat), math.radians(lon)
    phi2 = math.asin(math.sin(phi1) * math.cos(delta) + math.cos(phi1) * math.sin(delta) * math.cos(theta))
    lambda2 = lambda1 + math.atan2(math.sin(theta) * math.sin(delta) * math.cos(phi1), math.cos(delta) - math.sin(phi1) * math.sin(phi2))
    return math.degrees(phi2), (math.degrees(lambda2) + 540) % 360 - 180


def now_ms():
    return int(time.time() * 1000)


# ---------------------------------------------------------------- the broker


class Broker:
    """location-broker as a child process, with its secrets, database and log in `workdir`."""

    def __init__(self, binary, workdir, tiles=True):
        self.binary = binary
        self.workdir = workdir
        self.database = os.path.join(workdir, "broker.sqlite")
        self.tiles = os.path.join(workdir, "map.mbtiles") if tiles else None
        if self.tiles:
            # A synthetic street map around the trip, which the broker serves at /tiles/{z}/{x}/{y}.
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_mbtiles.py"), self.tiles],
                           check=True, capture_output=True, timeout=120)
        self.log_path = os.path.join(workdir, "broker.log")
        self.backend_key = base64.b16encode(os.urandom(24)).decode().lower()
        self.env = dict(os.environ)
        self.env.update({
            "LOCATION_BROKER_JWT_SECRET": base64.b16encode(os.urandom(32)).decode().lower(),
            "LOCATION_BROKER_BACKEND_KEY": self.backend_key,
            "LOCATION_BROKER_LOG_LEVEL": os.environ.get("BROWSER_TEST_LOG_LEVEL", "notice"),
            "LOCATION_BROKER_PUBLISH_RATE": "20",
            "LOCATION_BROKER_PUBLISH_BURST": "40",
        })
        if self.tiles:
            self.env["LOCATION_BROKER_MAP_TILES_FILE"] = self.tiles
        self.process = None
        self.port = 0

    def start(self, port=0):
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        with open(self.log_path, "ab") as output:
            # Run in the work directory so that no config/broker.yaml of the checkout is read.
            self.process = subprocess.Popen(
                [self.binary, "--host", HOST, "--port", str(port), "--database", self.database],
                cwd=self.workdir, env=self.env, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as logfile:
                logfile.seek(offset)
                found = re.search(rb"address=127\.0\.0\.1:(\d+)", logfile.read())
            if found:
                self.port = int(found.group(1))
                return self.port
            if self.process.poll() is not None:
                raise CheckFailed("the broker did not start:\n" + self.tail())
            time.sleep(0.1)
        raise CheckFailed("the broker did not say it was listening within 60 s:\n" + self.tail())

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None

    def tail(self):
        try:
            with open(self.log_path, "r", errors="replace") as logfile:
                return "".join(logfile.readlines()[-30:])
        except OSError:
            return "(no log)"

    def token(self, identity):
        result = subprocess.run([self.binary, "token", "--identity", identity, "--ttl", "3600"], cwd=self.workdir, env=self.env,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise CheckFailed("could not mint a token: " + result.stderr)
        return result.stdout.strip()

    def request(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://{HOST}:{self.port}{path}", data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def watch_link(self):
        """The donor's watch link for the donation, as the backend would hand it to them."""
        status, text = self.request("POST", f"/v1/donations/{DONATION}/watch-token", None, {"Authorization": f"Bearer {self.backend_key}"})
        if status != 200:
            raise CheckFailed(f"POST watch-token answered {status}: {text}")
        link = json.loads(text)
        if link.get("url") != f"/track/{DONATION}#token={link.get('token')}":
            raise CheckFailed(f"the watch link's url is {link.get('url')!r}")
        return link

    def put_donation(self, state):
        body = {"donor": DONOR, "volunteer": VOLUNTEER, "state": state, "home": HOME, "institution": INSTITUTION}
        status, text = self.request("PUT", f"/v1/donations/{DONATION}", body,
                                    {"Authorization": f"Bearer {self.backend_key}", "Content-Type": "application/json"})
        if status != 200:
            raise CheckFailed(f"PUT {state} answered {status}: {text}")
        log(f"backend: {DONATION} is now {state}")


# ---------------------------------------------------------------- the volunteer


class Volunteer:
    """A volunteer's phone: WebSocket publishes, or OwnTracks HTTP posts."""

    def __init__(self, broker, token):
        self.broker = broker
        self.token = token
        self.socket = None
        self.count = 0

    async def connect(self):
        url = f"ws://{HOST}:{self.broker.port}/v1/ws?token={self.token}"
        self.socket = await asyncio.wait_for(websockets.connect(url), timeout=10)
        welcome = json.loads(await asyncio.wait_for(self.socket.recv(), timeout=10))
        if welcome.get("type") != "welcome":
            raise CheckFailed(f"the volunteer got {welcome} instead of welcome")

    async def close(self):
        if self.socket:
            try:
                await asyncio.wait_for(self.socket.close(), timeout=5)
            except Exception:
                pass
            self.socket = None

    async def publish(self, lat, lon, speed=8.0, heading=None):
        self.count += 1
        position = {"lat": lat, "lon": lon, "accuracy": 6, "speed": speed, "timestamp": now_ms()}
        if heading is not None:
            position["heading"] = heading
        frame_id = f"p{self.count}"
        await self.socket.send(json.dumps({"type": "publish", "id": frame_id, "position": position}))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            reply = json.loads(await asyncio.wait_for(self.socket.recv(), timeout=10))
            if reply.get("re") == frame_id:
                if reply.get("type") != "ack":
                    raise CheckFailed(f"publish refused: {reply}")
                return reply
        raise CheckFailed("no ack for a publish within 10 s")

    def owntracks(self, lat, lon, vel_kmh, cog):
        """A location as the OwnTracks app posts it in HTTP mode."""
        body = {"_type": "location", "acc": 9, "alt": 25, "batt": 71, "bs": 1, "cog": cog, "conn": "m", "lat": lat, "lon": lon,
                "t": "u", "tid": "VO", "tst": int(time.time()), "vac": 3, "vel": vel_kmh}
        credentials = base64.b64encode(f"{VOLUNTEER}:{self.token}".encode()).decode()
        status, text = self.broker.request("POST", "/v1/owntracks", body,
                                           {"Authorization": f"Basic {credentials}", "Content-Type": "application/json"})
        if status != 200 or text != "[]":
            raise CheckFailed(f"OwnTracks POST answered {status}: {text}")


# ---------------------------------------------------------------- Chromium over the DevTools Protocol


class Browser:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.profile = os.path.join(workdir, "chromium-profile")
        self.process = None
        self.socket = None
        self.session = None
        self.next_id = 0
        self.waiting = {}
        self.reader = None
        self.problems = []
        self.arguments = []  # more command line switches, for a test that needs them

    async def start(self):
        os.makedirs(self.profile, exist_ok=True)
        with open(os.path.join(os.path.dirname(self.profile), "chromium.log"), "ab") as output:
            self.process = subprocess.Popen([
                self.binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--remote-debugging-address=" + HOST,
                "--remote-debugging-port=0", "--user-data-dir=" + self.profile, *self.arguments, "about:blank",
            ], stdout=output, stderr=subprocess.STDOUT)
        active = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if os.path.exists(active):
                lines = open(active).read().split("\n")
                if len(lines) >= 2 and lines[0].strip() and lines[1].strip():
                    break
            if self.process.poll() is not None:
                raise CheckFailed("Chromium exited at start; see chromium.log")
            await asyncio.sleep(0.1)
        else:
            raise CheckFailed("Chromium did not open its DevTools port within 30 s")
        url = f"ws://{HOST}:{lines[0].strip()}{lines[1].strip()}"
        self.socket = await asyncio.wait_for(websockets.connect(url, max_size=64 * 1024 * 1024), timeout=10)
        self.reader = asyncio.create_task(self.read())
        target = await self.call("Target.createTarget", {"url": "about:blank"}, browser=True)
        attached = await self.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, browser=True)
        self.session = attached["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            await self.call(domain)

    async def read(self):
        try:
            async for text in self.socket:
                message = json.loads(text)
                if "id" in message:
                    future = self.waiting.pop(message["id"], None)
                    if future and not future.done():
                        future.set_result(message)
                else:
                    self.observe(message)
        except websockets.ConnectionClosed:
            pass

    def observe(self, message):
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.problems.append("exception: " + json.dumps(details.get("exception", {}).get("description") or details.get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.problems.append("console." + params["type"] + ": " + json.dumps([a.get("value") for a in params.get("args", [])]))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            text = entry.get("text", "")
            # Failed sockets and requests while the broker restarts are expected; policy violations are not.
            if "Content Security Policy" in text or entry.get("source") in ("security", "violation"):
                self.problems.append("log: " + text)

    async def call(self, method, params=None, browser=False, timeout=15):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if not browser:
            message["sessionId"] = self.session
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        await self.socket.send(json.dumps(message))
        reply = await asyncio.wait_for(future, timeout=timeout)
        if "error" in reply:
            raise CheckFailed(f"{method} failed: {reply['error']}")
        return reply.get("result", {})

    async def viewport(self, metrics):
        await self.call("Emulation.setDeviceMetricsOverride", metrics)

    async def navigate(self, url):
        await self.call("Page.navigate", {"url": url})

    async def page(self):
        """What the page says: its facts as text."""
        expression = """JSON.stringify((() => {
            const text = (id) => { const e = document.getElementById(id); return e ? e.textContent.trim() : null; };
            const final = document.getElementById('final');
            return {
              title: text('title'), connection: text('connection'), headline: text('headline'), destination: text('destination'),
              notice: text('notice'), distanceLabel: text('distance-label'), distance: text('distance'), eta: text('eta'),
              age: text('age'), presence: text('presence'), heading: text('heading'), map: text('map-desc'),
              final: final && !final.hidden ? final.textContent.trim() : '',
              events: [...document.querySelectorAll('#events li')].map((li) => li.textContent.trim()),
              leaflet: typeof L !== 'undefined' && document.querySelector('#map.leaflet-container') !== null,
              mapHidden: document.getElementById('map').hidden,
              attribution: (document.querySelector('#map .leaflet-control-attribution') || {}).textContent || null,
              mapDescVisible: !document.getElementById('map-desc').classList.contains('visually-hidden'),
              tiles: [...document.querySelectorAll('#map img.leaflet-tile-loaded')].filter((i) => i.naturalWidth > 0).map((i) => i.src),
              markers: [...document.querySelectorAll('#map .marker')].map((m) => m.className.baseVal ?? m.className),
              resources: performance.getEntriesByType('resource').map((e) => e.name),
            };
        })())"""
        result = await self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        value = result.get("result", {}).get("value")
        return json.loads(value) if isinstance(value, str) else {}

    async def address(self):
        """The address bar, the fragment, and the addresses in the tab's history."""
        result = await self.call("Runtime.evaluate", {"expression": "JSON.stringify({href: location.href, hash: location.hash})",
                                                      "returnByValue": True})
        where = json.loads(result.get("result", {}).get("value") or "{}")
        history = await self.call("Page.getNavigationHistory")
        where["history"] = [entry.get("url", "") for entry in history.get("entries", [])]
        return where

    async def reload(self):
        """Reloads the page and waits until the new document runs (the old one carries a mark the new one lacks)."""
        await self.call("Runtime.evaluate", {"expression": "window.__beforeReload = true"})
        await self.call("Page.reload", {"ignoreCache": True})
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            try:
                result = await self.call("Runtime.evaluate", {"expression": "window.__beforeReload === true && document.readyState",
                                                              "returnByValue": True})
                if result.get("result", {}).get("value") is False:
                    return
            except CheckFailed:
                pass  # the context changes under the call while the new document loads
            await asyncio.sleep(0.1)
        raise CheckFailed(f"the page did not reload within {WAIT_SECONDS} s")

    async def screenshot(self, path):
        shot = await self.call("Page.captureScreenshot", {"format": "png"}, timeout=30)
        with open(path, "wb") as output:
            output.write(base64.b64decode(shot["data"]))
        log(f"screenshot: {path}")

    async def stop(self):
        if self.reader:
            self.reader.cancel()
        if self.socket:
            try:
                await asyncio.wait_for(self.socket.close(), timeout=5)
            except Exception:
                pass
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


# ---------------------------------------------------------------- checks


def distance_metres(text):
    """Parses '850 m' or '1.2 km'."""
    found = re.fullmatch(r"([\d.]+) (m|km)", text or "")
    if not found:
        return None
    return float(found.group(1)) * (1000 if found.group(2) == "km" else 1)


async def wait_for(browser, what, predicate, seconds=WAIT_SECONDS):
    deadline = time.monotonic() + seconds
    seen = {}
    while time.monotonic() < deadline:
        seen = await browser.page()
        try:
            if predicate(seen):
                log(f"ok: {what}  [headline={seen.get('headline')!r} distance={seen.get('distance')!r} "
                    f"notice={seen.get('notice')!r} connection={seen.get('connection')!r}]")
                return seen
        except (KeyError, TypeError):
            pass
        await asyncio.sleep(0.2)
    raise CheckFailed(f"not within {seconds} s: {what}\nthe page showed:\n{json.dumps(seen, indent=2, ensure_ascii=False)}")


async def check_token_gone(browser, token, page_url):
    where = await browser.address()
    if where.get("hash") or where.get("href") != page_url:
        raise CheckFailed(f"the address bar still holds the token: {where.get('href', '').split('#')[0]}#... ({len(where.get('hash', ''))} characters after #)")
    leaked = [url for url in where.get("history", []) if token in url or "#token=" in url]
    if leaked:
        raise CheckFailed(f"the tab's history still holds the token in {len(leaked)} entr(y/ies)")
    log(f"ok: the token is gone from the address bar ({where['href']}) and from the {len(where['history'])} history entries")


async def check_map(browser, origin):
    """Leaflet draws the trip on tiles loaded from the broker's /tiles/..., and nothing comes from another host."""
    seen = await wait_for(browser, "Leaflet draws home, institution and volunteer on tiles from the broker", lambda p:
                          p["leaflet"] and len(p["tiles"]) >= 4 and len(p["markers"]) >= 3)
    foreign = [src for src in seen["tiles"] if not src.startswith(origin + "/tiles/")]
    if foreign:
        raise CheckFailed(f"tiles came from elsewhere than the broker's /tiles/: {foreign[:3]}")
    elsewhere = [name for name in seen["resources"] if not name.startswith(origin + "/")]
    if elsewhere:
        raise CheckFailed(f"the page loaded resources from another host: {elsewhere[:3]}")
    for needed in ("/assets/leaflet/leaflet.js", "/assets/leaflet/leaflet.css"):
        if origin + needed not in seen["resources"]:
            raise CheckFailed(f"the page did not load {needed} from the broker")
    log(f"ok: {len(seen['tiles'])} tiles loaded from {origin}/tiles/ (e.g. {seen['tiles'][0][len(origin):]}), "
        f"{len(seen['resources'])} resources, all from the broker")


async def check_without_leaflet(options, browser, workdir):
    """A broker whose leaflet_folder is empty says so once in its log, and its page still tracks, as text."""
    folder = os.path.join(workdir, "no-leaflet")
    os.makedirs(folder)
    broker = Broker(options.broker, folder, tiles=False)
    broker.env["LOCATION_BROKER_LEAFLET_FOLDER"] = folder
    try:
        port = broker.start()
        with open(broker.log_path, "r", errors="replace") as logfile:
            warnings = [line for line in logfile if "no Leaflet in leaflet_folder" in line]
        if len(warnings) != 1:
            raise CheckFailed(f"a broker without Leaflet should log one warning about it, not {len(warnings)}:\n" + broker.tail())
        broker.put_donation("BEING-LOOKED-FOR")
        link = broker.watch_link()
        await browser.navigate(f"http://{HOST}:{port}{link['url']}")
        await wait_for(browser, "without Leaflet the page tracks as text: the map is hidden and its description shown", lambda p:
                       p["connection"] == "live" and p["headline"] == "On the way to your home" and not p["leaflet"]
                       and p["mapHidden"] and p["mapDescVisible"] and p["map"] != "")
        log("ok: without Leaflet the broker logged one warning and the page works without the street map")
    finally:
        broker.stop()


class TileServer:
    """A tile server on another origin (another port), serving an MBTiles file's tiles and noting each request's Referer."""

    def __init__(self, mbtiles):
        import http.server
        import sqlite3
        import threading
        server = self
        self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                found = re.fullmatch(r"/(\d+)/(\d+)/(\d+)\.png", self.path)
                data = None
                if found:
                    z, x, y = (int(v) for v in found.groups())
                    with sqlite3.connect(f"file:{mbtiles}?mode=ro", uri=True) as database:
                        row = database.execute("SELECT tile_data FROM tiles WHERE zoom_level=? AND tile_column=? AND tile_row=?",
                                               (z, x, 2 ** z - 1 - y)).fetchone()
                    data = row[0] if row else None
                server.requests.append((self.path, self.headers.get("Referer")))
                self.send_response(200 if data else 404)
                self.send_header("Content-Type", "image/png")
                self.end_headers()
                if data:
                    self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.http = http.server.ThreadingHTTPServer((HOST, 0), Handler)
        self.port = self.http.server_address[1]
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.http.shutdown()
        self.http.server_close()


async def check_tile_server(options, browser, workdir, mbtiles):
    """With map_tiles_url the page loads tiles from exactly that origin, sends it no Referer, and shows the attribution as text."""
    tiles = TileServer(mbtiles)
    folder = os.path.join(workdir, "tile-server")
    os.makedirs(folder)
    broker = Broker(options.broker, folder, tiles=False)
    origin = f"http://{HOST}:{tiles.port}"
    broker.env["LOCATION_BROKER_MAP_TILES_URL"] = origin + "/{z}/{x}/{y}.png"
    broker.env["LOCATION_BROKER_MAP_TILES_ATTRIBUTION"] = "Test tiles <b>not bold</b>"
    try:
        port = broker.start()
        broker.put_donation("BEING-LOOKED-FOR")
        link = broker.watch_link()
        await browser.navigate(f"http://{HOST}:{port}{link['url']}")
        seen = await wait_for(browser, "with map_tiles_url Leaflet draws tiles from the tile server", lambda p:
                              p["connection"] == "live" and p["leaflet"] and len(p["tiles"]) >= 2)
        wrong = [src for src in seen["tiles"] if not src.startswith(origin + "/")]
        if wrong:
            raise CheckFailed(f"tiles came from elsewhere than {origin}: {wrong[:3]}")
        if seen["attribution"] != "Test tiles <b>not bold</b>":
            raise CheckFailed(f"the attribution should show as text, it shows {seen['attribution']!r}")
        referred = [path for path, referer in tiles.requests if referer]
        if referred:
            raise CheckFailed(f"the tile server was sent a Referer for {referred[:3]}")
        log(f"ok: {len(seen['tiles'])} tiles from the tile server {origin}, which got {len(tiles.requests)} requests and no Referer; "
            "the attribution shows as text")
    finally:
        broker.stop()
        tiles.stop()


def has_event(page, fragment):
    return any(fragment in event for event in page.get("events", []))


async def run(options):
    workdir = tempfile.mkdtemp(prefix="browser-test-")
    os.makedirs(options.out, exist_ok=True)
    broker = Broker(options.broker, workdir)
    browser = Browser(options.chromium, workdir)
    volunteer = None
    try:
        port = broker.start()
        log(f"broker: listening on {HOST}:{port} (work directory {workdir})")
        broker.put_donation("CREATED")
        broker.put_donation("BEING-LOOKED-FOR")
        link = broker.watch_link()
        donor_token = link["token"]
        volunteer = Volunteer(broker, broker.token(VOLUNTEER))

        await browser.start()
        await browser.viewport(PHONE)
        url = f"http://{HOST}:{port}{link['url']}"
        log(f"chromium: opening the watch link http://{HOST}:{port}/track/{DONATION}#token=...")
        await browser.navigate(url)

        # Before the first fix: the state in words, and "waiting for the volunteer's location".
        await wait_for(browser, "the page is live and waits for the first location", lambda p:
                       p["connection"] == "live" and p["headline"] == "On the way to your home"
                       and "Waiting for the volunteer's location" in p["notice"] and p["distance"] == "\u2014"
                       and p["title"] == f"Donation {DONATION}" and "Av. Corrientes 1234" in p["destination"])
        await browser.screenshot(os.path.join(options.out, "tracking-page-waiting.png"))

        # The token is out of the address bar and out of the history, and the page still tracks (checked below).
        await check_token_gone(browser, donor_token, f"http://{HOST}:{port}/track/{DONATION}")

        # Positions arrive: the distance to the home shrinks.
        await volunteer.connect()
        lat, lon = destination(HOME["lat"], HOME["lon"], 20, 2000)
        await volunteer.publish(lat, lon, heading=200)
        first = await wait_for(browser, "the first position shows a distance of 2.0 km", lambda p:
                               p["distance"] == "2.0 km" and p["notice"] == "" and p["presence"] == "online"
                               and p["distanceLabel"] == "Distance to your home" and has_event(p, "location is now shown"))
        lat, lon = destination(HOME["lat"], HOME["lon"], 15, 1200)
        volunteer.owntracks(lat, lon, vel_kmh=29, cog=195)
        second = await wait_for(browser, "a position from the OwnTracks endpoint brings it to 1.2 km", lambda p: p["distance"] == "1.2 km")
        if not distance_metres(second["distance"]) < distance_metres(first["distance"]):
            raise CheckFailed(f"the distance did not shrink: {first['distance']} then {second['distance']}")
        # A reload (as a phone that discarded the tab does) keeps tracking without the token in the address.
        await browser.reload()
        await wait_for(browser, "the page tracks again after a reload, with the token kept for this tab only", lambda p:
                       p["connection"] == "live" and p["distance"] == "1.2 km")
        await check_token_gone(browser, donor_token, f"http://{HOST}:{port}/track/{DONATION}")
        for metres, bearing in ((950, 12), (700, 8)):
            lat, lon = destination(HOME["lat"], HOME["lon"], bearing, metres)
            await volunteer.publish(lat, lon, heading=190)
        third = await wait_for(browser, "the distance reads 700 m with an ETA", lambda p: p["distance"] == "700 m" and p["eta"].endswith("min"))
        if "700 m" not in third["map"]:
            raise CheckFailed(f"the map's description does not say the distance: {third['map']!r}")
        await check_map(browser, f"http://{HOST}:{port}")
        await browser.screenshot(os.path.join(options.out, "tracking-page.png"))
        await browser.viewport(DESKTOP)
        await asyncio.sleep(0.3)
        await browser.screenshot(os.path.join(options.out, "tracking-page-desktop.png"))
        await browser.viewport(PHONE)

        # Arrival at the home, then the pause while the goods change hands.
        lat, lon = destination(HOME["lat"], HOME["lon"], 0, 60)
        await volunteer.publish(lat, lon, speed=1, heading=180)
        await wait_for(browser, "arrival at the home is announced", lambda p:
                       p["headline"] == "Arrived at your home" and p["eta"] == "arrived" and has_event(p, "The volunteer has arrived at your home"))
        broker.put_donation("PICKED-BY-VOLUNTEER")
        await wait_for(browser, "the state change pauses tracking", lambda p:
                       p["headline"].startswith("Picked up") and "paused" in p["notice"] and p["distance"] == "\u2014"
                       and has_event(p, "Tracking paused: Picked up"))
        broker.put_donation("BEING-TAKEN-TO")
        await wait_for(browser, "tracking resumes towards the institution", lambda p:
                       p["headline"] == "On the way to the institution" and p["distanceLabel"] == "Distance to Caritas Palermo"
                       and "Caritas Palermo" in p["destination"] and has_event(p, "Tracking resumed"))
        lat, lon = destination(INSTITUTION["lat"], INSTITUTION["lon"], 120, 1500)
        await volunteer.publish(lat, lon, heading=300)
        await wait_for(browser, "the distance to the institution reads 1.5 km", lambda p: p["distance"] == "1.5 km")

        # The broker restarts: the page says so, reconnects and asks for what it missed.
        await volunteer.close()
        broker.stop()
        log("broker: stopped")
        await wait_for(browser, "the page notices the lost connection", lambda p:
                       p["connection"].startswith("reconnecting") and p["notice"].startswith("No connection"))
        broker.start(port)
        log(f"broker: restarted on {HOST}:{port}")
        await wait_for(browser, "the page reconnects and subscribes again with since", lambda p:
                       p["connection"] == "live" and has_event(p, "Reconnected; asking for the positions missed while disconnected")
                       and has_event(p, "Subscribed again"), seconds=40)
        await volunteer.connect()
        lat, lon = destination(INSTITUTION["lat"], INSTITUTION["lon"], 120, 800)
        await volunteer.publish(lat, lon, heading=300)
        await wait_for(browser, "positions arrive again after the restart: 800 m", lambda p: p["distance"] == "800 m")
        lat, lon = destination(INSTITUTION["lat"], INSTITUTION["lon"], 120, 40)
        await volunteer.publish(lat, lon, speed=0.5, heading=300)
        await wait_for(browser, "arrival at the institution is announced", lambda p:
                       p["headline"] == "Arrived at the institution" and has_event(p, "The volunteer has arrived at Caritas Palermo"))

        # Delivered: a clear final message, and the page stops.
        broker.put_donation("DELIVERED")
        ended = await wait_for(browser, "the page says tracking ended after DELIVERED", lambda p:
                               "Tracking has ended" in p["final"] and "Delivered to Caritas Palermo. Thank you!" in p["final"]
                               and p["headline"] == "Delivered to the institution" and p["connection"] == "ended"
                               and p["presence"] == "\u2014" and "no longer shown" in p["map"])
        await browser.screenshot(os.path.join(options.out, "tracking-page-ended.png"))
        if ended["notice"]:
            raise CheckFailed(f"the notice should give way to the final message, but says {ended['notice']!r}")
        kept = await browser.call("Runtime.evaluate", {"expression": "sessionStorage.length", "returnByValue": True})
        if kept.get("result", {}).get("value") != 0:
            raise CheckFailed("the page still keeps the watch token after tracking ended")
        log("ok: the page forgot the watch token when tracking ended")

        await check_without_leaflet(options, browser, workdir)
        await check_tile_server(options, browser, workdir, broker.tiles)

        if browser.problems:
            raise CheckFailed("the page reported problems:\n  " + "\n  ".join(browser.problems))
        log("ok: no script errors and no policy violations")
        if options.update_docs:
            shutil.copyfile(os.path.join(options.out, "tracking-page.png"), options.update_docs)
            log(f"copied the phone screenshot to {options.update_docs}")
        return 0
    except CheckFailed as failure:
        log(f"FAIL: {failure}")
        log("broker log (end):\n" + broker.tail())
        if browser.problems:
            log("page problems:\n  " + "\n  ".join(browser.problems))
        try:
            await browser.screenshot(os.path.join(options.out, "tracking-page-failure.png"))
        except Exception:
            pass
        return 1
    finally:
        if volunteer:
            await volunteer.close()
        await browser.stop()
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--broker", required=True, help="the location-broker binary")
    parser.add_argument("--chromium", default="chromium", help="the Chromium binary")
    parser.add_argument("--out", required=True, help="folder for the screenshots")
    parser.add_argument("--update-docs", metavar="PNG", help="also copy the phone screenshot here (docs/tracking-page.png)")
    options = parser.parse_args()
    sys.exit(asyncio.run(run(options)))


if __name__ == "__main__":
    main()
