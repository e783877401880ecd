#!/usr/bin/env python3
"""The broker's events end to end: webhooks to a receiver and Web Pushes to a push service, through a trip, a broker
killed with SIGKILL, and a receiver that fails for a while. The broker's names it relies on (settings, routes, the events
expected) are gathered under SETTINGS below.

With the stand-ins (webhook_receiver.py, push_service.py; both checked by stand_ins_self_test.py) in this process:
1. Starts location-broker on SQLite (a free 127.0.0.1 port, temporary secrets) with `webhook_url` at the receiver,
   `webhook_secrets`, `push_subject`, `push_service_hosts: 127.0.0.1:<the stand-in's port>`; reads its VAPID key (GET /v1/push/key) and
   gives it to the push service, which then refuses a push signed with any other.
2. The trip of donation d-1: created by the backend API, a watch token for the donor, a push subscription made by the
   push service POSTed with it (and refused with a bad token, a foreign push host, bad keys); a volunteer (OwnTracks
   HTTP) drives toward the home at 30 km/h until within the arrival radius; picked up (pause), taken to the
   institution (resume), driven there, DELIVERED; a fix published after the end. A second browser of d-1 whose push
   service answers 503 to everything is tried with every push on its own, the end included, and with nothing older
   after the end; the first browser's pushes arrive in order, once each, without waiting for it.
   Checks: every webhook verified, in order (started, first_position, approaching, arrived, paused, resumed,
   first_position, approaching, arrived, ended), none after the end; pushes decrypted for approaching, arrived,
   resumed (institution), approaching, arrived, ended (delivered), none after the end; no coordinate, label, name or
   e-mail in any webhook or push; nothing refused by either stand-in; no failed event for the operator.
3. Resilience, donation d-2: the receiver answers 500; the trip starts, a fix, a pause; the broker is killed with
   SIGKILL and started again on the same database; the trip goes on to DELIVERED; the receiver recovers. Every event
   then arrives, once per id (redeliveries are deduplicated by webhook-id), in order.

Usage: delivery_events_test.py --broker PATH   (run with the venv of scripts/events-stand-ins-test --venv-only)
Exits 1 on the first failed check, after printing the broker's log tail and what the stand-ins recorded.
"""

import argparse
import base64
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from push_service import PushService  # noqa: E402
from webhook_receiver import WebhookReceiver  # noqa: E402

# ================================================================ SETTINGS: adjust to the broker here, and only here

HOST = "127.0.0.1"
# Environment variables the broker reads (docs/CONFIGURATION.md: LOCATION_BROKER_ + the setting's name).
ENV = {
    "jwt_secret": "LOCATION_BROKER_JWT_SECRET",
    "backend_key": "LOCATION_BROKER_BACKEND_KEY",
    "webhook_url": "LOCATION_BROKER_WEBHOOK_URL",
    "webhook_secrets": "LOCATION_BROKER_WEBHOOK_SECRETS",
    "push_subject": "LOCATION_BROKER_PUSH_SUBJECT",
    "push_service_hosts": "LOCATION_BROKER_PUSH_SERVICE_HOSTS",
    "events_approaching_minutes": "LOCATION_BROKER_EVENTS_APPROACHING_MINUTES",
    "events_silent_seconds": "LOCATION_BROKER_EVENTS_SILENT_SECONDS",
    "webhook_timeout_seconds": "LOCATION_BROKER_WEBHOOK_TIMEOUT_SECONDS",
    "publish_rate": "LOCATION_BROKER_PUBLISH_RATE",
    "publish_burst": "LOCATION_BROKER_PUBLISH_BURST",
    "log_level": "LOCATION_BROKER_LOG_LEVEL",
}
APPROACHING_MINUTES = 5
ARRIVAL_RADIUS_M = 150          # arrival_radius_meters' default
PUSH_SUBJECT = "mailto:ops@example.org"
# The broker's routes (docs/PROTOCOL.md, section 12; docs/openapi.yaml).
ROUTES = {
    "donation": "/v1/donations/{id}",
    "watch_token": "/v1/donations/{id}/watch-token",
    "owntracks": "/v1/owntracks",
    "push_key": "/v1/push/key",
    "push_subscriptions": "/v1/push/subscriptions",
    "failed_events": "/v1/events/failed?route={route}",
    "retry_events": "/v1/events/retry",
}
WEBHOOK_PATH = "/hooks/ponte"
# What each donation's webhooks must be, in order: (type, fields its data must hold besides `donation`).
TRIP_WEBHOOKS = [
    ("tracking.started", {"destination": "home"}),
    ("tracking.first_position", {"destination": "home"}),
    ("tracking.approaching", {"destination": "home"}),
    ("tracking.arrived", {"destination": "home"}),
    ("tracking.paused", {"state": "PICKED-BY-VOLUNTEER"}),
    ("tracking.resumed", {"destination": "institution"}),
    ("tracking.first_position", {"destination": "institution"}),
    ("tracking.approaching", {"destination": "institution"}),
    ("tracking.arrived", {"destination": "institution"}),
    ("tracking.ended", {"reason": "delivered"}),
]
# The webhooks that come with a push (docs/PROTOCOL.md 12.1, "Pushed to the donor"), in order.
TRIP_PUSHES = ["tracking.approaching", "tracking.arrived", "tracking.resumed", "tracking.approaching", "tracking.arrived",
               "tracking.ended"]
RESILIENCE_WEBHOOKS = [
    ("tracking.started", {"destination": "home"}),
    ("tracking.first_position", {"destination": "home"}),
    ("tracking.paused", {"state": "PICKED-BY-VOLUNTEER"}),
    ("tracking.resumed", {"destination": "institution"}),
    ("tracking.ended", {"reason": "delivered"}),
]
# events_silent_seconds for the silent/back check: None leaves the broker's default and skips the check; a number
# (as small as the broker allows) makes the volunteer go quiet that long on the way to the institution, and
# tracking.silent then tracking.back are expected after the institution's first_position.
SILENT_SECONDS = 30
# How long deliveries may take: the dispatcher's poll, and its backoff after the receiver recovers.
DELIVERY_WAIT_S = 30
RECOVERY_WAIT_S = 180
# After the end: how long to watch that nothing more comes.
QUIET_AFTER_END_S = 5

DONOR = "donor@example.org"
VOLUNTEER = "vol@example.org"
HOME = {"lat": -34.6037, "lon": -58.3816, "label": "Av. Corrientes 1234"}
INSTITUTION = {"lat": -34.5875, "lon": -58.4206, "name": "Caritas Palermo"}
# No payload may hold any of these (with privacy.py's own checks: coordinates, lat/lon keys, '@').
FORBIDDEN = [DONOR, VOLUNTEER, HOME["label"], INSTITUTION["name"], "Corrientes", "Caritas"]
SPEED_KMH = 30
EARTH_RADIUS = 6371008.8

# ================================================================


class CheckFailed(Exception):
    pass


def log(message):
    print(message, flush=True)


def check(condition, what):
    if not condition:
        raise CheckFailed(what)
    log(f"ok: {what}")


def destination(lat, lon, bearing, distance):
    """The point `distance` metres from (lat, lon) along `bearing` degrees (as Geodesy.destination)."""
    delta = distance / EARTH_RADIUS
    theta = math.radians(bearing)
    phi1, lambda1 = math.radians(lat), math.radians(lon)
    phi2 = math.asin(math.sin(phi1) * math.cos(delta) + math.cos(phi1) * math.sin(delta) * math.cos(theta))
    lambda2 = lambda1 + math.atan2(math.sin(theta) * math.sin(delta) * math.cos(phi1), math.cos(delta) - math.sin(phi1) * math.sin(phi2))
    return math.degrees(phi2), (math.degrees(lambda2) + 540) % 360 - 180


def wait_until(what, predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            log(f"ok: {what}")
            return value
        time.sleep(0.2)
    raise CheckFailed(f"not within {seconds} s: {what}")


# ---------------------------------------------------------------- the broker


class Broker:
    """location-broker as a child process on SQLite, its secrets, database and log in `workdir`; `kill()` is SIGKILL."""

    def __init__(self, binary, workdir, settings):
        self.binary = binary
        self.workdir = workdir
        self.database = os.path.join(workdir, "broker.sqlite")
        self.log_path = os.path.join(workdir, "broker.log")
        self.backend_key = base64.b16encode(os.urandom(24)).decode().lower()
        self.env = dict(os.environ)
        self.env.update({
            ENV["jwt_secret"]: base64.b16encode(os.urandom(32)).decode().lower(),
            ENV["backend_key"]: self.backend_key,
            ENV["log_level"]: "info",
            ENV["publish_rate"]: "20",
            ENV["publish_burst"]: "40",
        })
        self.env.update({ENV[name]: str(value) for name, value in settings.items()})
        self.process = None
        self.port = 0

    def start(self, port=0):
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        with open(self.log_path, "ab") as output:
            # In the work directory, so that no config/broker.yaml of the checkout is read.
            self.process = subprocess.Popen([self.binary, "--host", HOST, "--port", str(port), "--database", self.database],
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

    def kill(self):
        """SIGKILL: no shutdown, no flush; what is durable must be in the database already."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None

    def tail(self, lines=40):
        try:
            with open(self.log_path, "r", errors="replace") as logfile:
                return "".join(logfile.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def log_text(self):
        with open(self.log_path, "r", errors="replace") as logfile:
            return logfile.read()

    def token(self, identity):
        result = subprocess.run([self.binary, "token", "--identity", identity, "--ttl", "3600"], cwd=self.workdir, env=self.env,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise CheckFailed("could not mint a token: " + result.stderr)
        return result.stdout.strip()

    def request(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = dict(headers or {})
        if data is not None:
            headers.setdefault("Content-Type", "application/json")
        request = urllib.request.Request(f"http://{HOST}:{self.port}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def backend(self, method, path, body=None):
        return self.request(method, path, body, {"Authorization": f"Bearer {self.backend_key}"})

    def put_donation(self, donation, state):
        body = {"donor": DONOR, "volunteer": VOLUNTEER, "state": state, "home": HOME, "institution": INSTITUTION}
        status, text = self.backend("PUT", ROUTES["donation"].format(id=donation), body)
        check(status == 200, f"backend: {donation} is now {state} (PUT answered {status})" + ("" if status == 200 else f": {text}"))

    def watch_token(self, donation):
        status, text = self.backend("POST", ROUTES["watch_token"].format(id=donation))
        check(status == 200, f"a watch token for {donation} (answered {status})")
        return json.loads(text)["token"]


class Volunteer:
    """The volunteer's phone in OwnTracks' HTTP mode: Basic auth with their e-mail and token, `vel` in km/h."""

    def __init__(self, broker, token):
        self.broker = broker
        self.token = token
        self.last_tst = 0

    def at(self, lat, lon, speed_kmh=SPEED_KMH):
        # OwnTracks' `tst` is in seconds: one fix per second at most, or the next one repeats the timestamp.
        tst = int(time.time())
        if tst <= self.last_tst:
            time.sleep(self.last_tst + 1 - time.time() + 0.05)
            tst = int(time.time())
        self.last_tst = tst
        body = {"_type": "location", "acc": 8, "lat": lat, "lon": lon, "tst": tst, "vel": speed_kmh, "cog": 0, "tid": "VO"}
        credentials = base64.b64encode(f"{VOLUNTEER}:{self.token}".encode()).decode()
        status, text = self.broker.request("POST", ROUTES["owntracks"], body, {"Authorization": f"Basic {credentials}"})
        if status != 200:
            raise CheckFailed(f"OwnTracks POST answered {status}: {text}")

    def drive(self, goal, distances, bearing):
        """Fixes at each distance (metres) from `goal`, coming from `bearing`."""
        for metres in distances:
            lat, lon = destination(goal["lat"], goal["lon"], bearing, metres)
            self.at(lat, lon, speed_kmh=SPEED_KMH if metres > ARRIVAL_RADIUS_M else 2)
        log(f"volunteer: drove to {distances[-1]} m of the goal through {len(distances)} fixes")


# ---------------------------------------------------------------- checks


def webhooks_of(receiver, donation):
    return [event for event in receiver.snapshot()["events"]
            if isinstance(event.get("payload"), dict) and event["payload"].get("data", {}).get("donation") == donation]


def pushes_of(service, donation):
    return [entry for entry in service.snapshot()["messages"] if entry["message"].get("donation") == donation]


def matches(events, expected):
    """Whether `events` (recorded webhooks) are `expected` in order: same types, and the data fields given."""
    if len(events) != len(expected):
        return False
    for event, (kind, fields) in zip(events, expected):
        payload = event["payload"]
        if payload.get("type") != kind or any(payload["data"].get(k) != v for k, v in fields.items()):
            return False
    return True


def describe(events):
    return "\n  ".join(f"{e['id']} {json.dumps(e['payload'], separators=(',', ':'))}" for e in events) or "(none)"


def check_approaching_data(events):
    for event in events:
        data = event["payload"]["data"]
        if event["payload"]["type"] == "tracking.approaching":
            check(isinstance(data.get("eta_minutes"), int) and 1 <= data["eta_minutes"] <= APPROACHING_MINUTES,
                  f"approaching {data['destination']}: eta_minutes {data.get('eta_minutes')} is whole, 1 to {APPROACHING_MINUTES}")
            check(isinstance(data.get("distance_m"), int) and data["distance_m"] % 100 == 0,
                  f"approaching {data['destination']}: distance_m {data.get('distance_m')} is rounded to 100 m")


def check_clean(receiver, service, broker):
    failures = receiver.snapshot()["failures"] + service.snapshot()["failures"]
    check(not failures, "neither stand-in recorded a failure (bad signature, bad VAPID, undecryptable push, leak):\n  "
          + "\n  ".join(json.dumps(f, ensure_ascii=False) for f in failures))
    for route in ("webhook", "push"):
        status, text = broker.backend("GET", ROUTES["failed_events"].format(route=route))
        check(status == 200 and json.loads(text) in ([], {"events": []}),
              f"the operator sees no failed {route} event (answered {status}: {text[:200]})")


# ---------------------------------------------------------------- the scenarios


def subscribe_for_pushes(broker, service, donation, token):
    subscription = service.new_subscription()
    path = ROUTES["push_subscriptions"]
    status, text = broker.request("POST", path, subscription, {"Authorization": "Bearer not-a-token"})
    check(status == 401, f"a push subscription with a bad token is refused (401; answered {status})")
    foreign = dict(subscription, endpoint="https://push.example.net/push/abc")
    status, text = broker.request("POST", path, foreign, {"Authorization": f"Bearer {token}"})
    check(status == 403, f"a push service outside push_service_hosts is refused (403; answered {status}: {text[:200]})")
    bad_keys = dict(subscription, keys={"p256dh": "AAAA", "auth": subscription["keys"]["auth"]})
    status, text = broker.request("POST", path, bad_keys, {"Authorization": f"Bearer {token}"})
    check(status == 400, f"a subscription whose p256dh is no P-256 point is refused (400; answered {status})")
    status, text = broker.request("POST", path, subscription, {"Authorization": f"Bearer {token}"})
    check(status == 201 and json.loads(text).get("donation") == donation,
          f"the push subscription for {donation} is accepted (201; answered {status}: {text[:200]})")
    return subscription


def trip(broker, receiver, service):
    donation = "d-1"
    broker.put_donation(donation, "CREATED")
    token = broker.watch_token(donation)
    subscribe_for_pushes(broker, service, donation, token)
    # A second browser of the same donation whose push service answers 503 to every push: it must neither delay nor
    # repeat the first browser's pushes, and be pushed nothing older once the donation has ended.
    failing = service.new_subscription()
    status, text = broker.request("POST", ROUTES["push_subscriptions"], failing, {"Authorization": f"Bearer {token}"})
    check(status == 201, f"a second browser subscribes to {donation} (201; answered {status}: {text[:200]})")
    failing_id = failing["endpoint"].rsplit("/", 1)[1]
    service.failing(failing_id)
    volunteer = Volunteer(broker, broker.token(VOLUNTEER))

    broker.put_donation(donation, "BEING-LOOKED-FOR")
    # 30 km/h is 500 m a minute: the ETA falls under APPROACHING_MINUTES between 2.5 km and 2 km.
    volunteer.drive(HOME, [4000, 3500, 3000, 2500, 2000, 1500, 1000, 500, 100, 60], bearing=20)
    broker.put_donation(donation, "PICKED-BY-VOLUNTEER")
    broker.put_donation(donation, "BEING-TAKEN-TO")
    expected = list(TRIP_WEBHOOKS)
    if SILENT_SECONDS:
        volunteer.drive(INSTITUTION, [4000], bearing=120)
        log(f"volunteer: quiet for {SILENT_SECONDS + 3} s")
        time.sleep(SILENT_SECONDS + 3)
        at = [kind for kind, _ in expected].index("tracking.first_position", 2) + 1
        expected[at:at] = [("tracking.silent", {"destination": "institution"}), ("tracking.back", {"destination": "institution"})]
    volunteer.drive(INSTITUTION, [4000, 3000, 2000, 1500, 1000, 500, 120, 40], bearing=120)
    broker.put_donation(donation, "DELIVERED")

    events = wait_until(f"{donation}'s webhooks arrive: " + ", ".join(kind for kind, _ in expected),
                        lambda: (lambda got: got if len(got) >= len(expected) else None)(webhooks_of(receiver, donation)),
                        DELIVERY_WAIT_S)
    check(matches(events, expected), "in this order, with these fields:\n  " + describe(events))
    check_approaching_data(events)
    stamps = [e["payload"]["timestamp"] for e in events]
    check(stamps == sorted(stamps), "their timestamps never go back")

    pushes = wait_until(f"{donation}'s pushes arrive and decrypt: " + ", ".join(TRIP_PUSHES),
                        lambda: (lambda got: got if len(got) >= len(TRIP_PUSHES) else None)(pushes_of(service, donation)),
                        DELIVERY_WAIT_S)
    check([p["message"].get("type") for p in pushes] == TRIP_PUSHES,
          "in this order: " + ", ".join(str(p["message"].get("type")) for p in pushes))
    for push in pushes:
        message = push["message"]
        check(all(isinstance(message.get(k), str) and message[k] for k in ("title", "body", "tag")),
              f"{message['type']}: the push has a title, a body and a tag ({message.get('title')!r})")
        check(push["urgency"] in ("very-low", "low", "normal", "high") and push["ttl"] >= 0 and push["topic"],
              f"{message['type']}: sent with Urgency {push['urgency']}, TTL {push['ttl']}, Topic {push['topic']}")
        check("url" not in message or ("token" not in message["url"] and "#" not in message["url"]),
              f"{message['type']}: no token in the push's url")
    check(len({p["message"]["tag"] for p in pushes}) == 1, "one tag for the donation: each notification replaces the last")

    # After the end: a fix is kept for nobody, and nothing more is sent.
    volunteer.drive(INSTITUTION, [10], bearing=120)
    time.sleep(QUIET_AFTER_END_S)
    check(len(webhooks_of(receiver, donation)) == len(expected), "no webhook after tracking.ended")
    check(len(pushes_of(service, donation)) == len(TRIP_PUSHES), "no push after tracking.ended")
    tried = [a["message"].get("type") for a in service.snapshot()["attempts"] if a["subscription"] == failing_id]
    log(f"push service: the failing browser was tried {len(tried)} times: " + ", ".join(tried))
    check("tracking.ended" in tried, "the failing browser was tried with the end too (its failures held nothing up)")
    after_end = tried[tried.index("tracking.ended"):] if "tracking.ended" in tried else []
    check(all(kind == "tracking.ended" for kind in after_end),
          "after the end the failing browser is tried with nothing older: " + ", ".join(after_end))
    status, _ = broker.request("POST", ROUTES["push_subscriptions"], service.new_subscription(), {"Authorization": f"Bearer {token}"})
    check(status in (401, 409), f"a push subscription for an ended donation is refused (answered {status})")


def resilience(broker, receiver, service):
    donation = "d-2"
    receiver.fail_for(3600)
    log("receiver: answering 500 until told otherwise")
    volunteer = Volunteer(broker, broker.token(VOLUNTEER))
    broker.put_donation(donation, "CREATED")
    broker.put_donation(donation, "BEING-LOOKED-FOR")
    volunteer.drive(HOME, [3000], bearing=200)
    broker.put_donation(donation, "PICKED-BY-VOLUNTEER")
    wait_until("the broker tried to deliver and got 500", lambda: receiver.snapshot()["refused_while_failing"] > 0, DELIVERY_WAIT_S)
    # Position events are appended shortly after detection: give the first fix's event time to be durable.
    time.sleep(2)
    port = broker.port
    broker.kill()
    log("broker: killed with SIGKILL")
    broker.start(port)
    log(f"broker: started again on {HOST}:{port}, same database")
    broker.put_donation(donation, "BEING-TAKEN-TO")
    broker.put_donation(donation, "DELIVERED")
    time.sleep(2)
    check(not webhooks_of(receiver, donation), "nothing of d-2 was recorded while the receiver failed")
    receiver.fail_for(0)
    log("receiver: accepting again")
    events = wait_until(f"every d-2 event arrives once the receiver recovers ({len(RESILIENCE_WEBHOOKS)})",
                        lambda: (lambda got: got if len(got) >= len(RESILIENCE_WEBHOOKS) else None)(webhooks_of(receiver, donation)),
                        RECOVERY_WAIT_S)
    check(matches(events, RESILIENCE_WEBHOOKS), "in order, each id once (the receiver dedups by webhook-id):\n  " + describe(events))
    stats = receiver.snapshot()
    log(f"receiver: {stats['refused_while_failing']} deliveries answered 500, {stats['duplicates']} redeliveries of an id already recorded")
    time.sleep(QUIET_AFTER_END_S)
    check(len(webhooks_of(receiver, donation)) == len(RESILIENCE_WEBHOOKS), "nothing more arrives for d-2")


def run(options):
    workdir = tempfile.mkdtemp(prefix="events-e2e-")
    secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    receiver = WebhookReceiver([secret], record_path=os.path.join(workdir, "webhooks.jsonl"), forbidden_strings=FORBIDDEN).start()
    service = PushService(record_path=os.path.join(workdir, "pushes.jsonl"), forbidden_strings=FORBIDDEN).start()
    broker = Broker(options.broker, workdir, {
        "webhook_url": receiver.url + WEBHOOK_PATH,
        "webhook_secrets": secret,
        "push_subject": PUSH_SUBJECT,
        # The stand-in's own port, allowed by name: any other port of the host is refused.
        "push_service_hosts": f"{HOST}:{service.port}",
        "events_approaching_minutes": APPROACHING_MINUTES,
        "webhook_timeout_seconds": 5,
        **({"events_silent_seconds": SILENT_SECONDS} if SILENT_SECONDS else {}),
    })
    try:
        broker.start()
        log(f"broker: listening on {HOST}:{broker.port} (work directory {workdir})")
        status, text = broker.request("GET", ROUTES["push_key"])
        check(status == 200, f"GET {ROUTES['push_key']} answers 200 (answered {status}: {text[:200]})")
        service.vapid_key = json.loads(text)["public_key"]
        trip(broker, receiver, service)
        resilience(broker, receiver, service)
        check_clean(receiver, service, broker)
        for secret_text in (secret, broker.backend_key):
            check(secret_text not in broker.log_text(), "no secret in the broker's log")
        log("events end to end: every check passed")
        return 0
    except CheckFailed as failure:
        log(f"FAIL: {failure}")
        log("broker log (end):\n" + broker.tail())
        log("webhooks recorded:\n  " + describe(receiver.snapshot()["events"]))
        log("failures recorded:\n  " + "\n  ".join(json.dumps(f, ensure_ascii=False)
                                                  for f in receiver.snapshot()["failures"] + service.snapshot()["failures"]))
        return 1
    finally:
        broker.stop()
        receiver.stop()
        service.stop()
        if options.keep:
            log(f"kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--broker", required=True, help="the location-broker binary")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (database, log, JSON lines records)")
    options = parser.parse_args()
    sys.exit(run(options))


if __name__ == "__main__":
    main()
