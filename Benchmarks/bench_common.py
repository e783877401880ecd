"""What the Python load drivers under Benchmarks/ share: the bench's secrets, token minting, starting a broker
node, creating donations through the backend API, and reading a process's CPU and memory from /proc.

Standard library only, so a driver imports it whatever else it needs (`sys.path` gets this folder first).
"""
import base64
import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

SECRET = "bench-secret-0123456789-0123456789-abcdef"
BACKEND_KEY = "bench-backend-key-0123456789-0123456789"


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def token(identity, ttl=3600, secret=SECRET):
    """An HS256 client token for `identity` (claim `sub`), valid `ttl` seconds, signed with the bench's secret."""
    enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    header = enc(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = enc(json.dumps({"sub": identity, "exp": int(time.time()) + ttl}).encode())
    sig = enc(hmac.new(secret.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest())
    return f"{header}.{body}.{sig}"


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid`, all its threads (/proc/PID/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid):
    """Resident memory of process `pid` in KB (/proc/PID/status, VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values, p):
    """The `p`th percentile of `values` (nearest rank), or None when there are none."""
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def stop_process(process, grace=15):
    """SIGTERM, then SIGKILL when `process` is still there `grace` seconds later; reaps it either way."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Node:
    """A broker started from `binary` on a free port with the bench's secrets, its publish limit raised out of the
    way, its SQLite database and log in `folder`, and `store` (a PostgreSQL URL) when it is a cluster node;
    `settings` (LOCATION_BROKER_* variables) override those defaults."""

    def __init__(self, binary, name, store, folder, settings=None):
        config = os.path.join(folder, f"{name}.yaml")
        with open(config, "w") as f:
            f.write("# bench: defaults only\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LOCATION_BROKER_")}
        env.update({
            "LOCATION_BROKER_JWT_SECRET": SECRET, "LOCATION_BROKER_BACKEND_KEY": BACKEND_KEY,
            "LOCATION_BROKER_NODE_ID": name,
            "LOCATION_BROKER_PUBLISH_RATE": "100000", "LOCATION_BROKER_PUBLISH_BURST": "100000",
            "LOCATION_BROKER_LOG_LEVEL": "notice",
        })
        if store:
            env["LOCATION_BROKER_STORE"] = store
            env["LOCATION_BROKER_CLUSTER_SECRET"] = "bench-cluster-secret-0123456789-0123456789"
        env.update(settings or {})
        self.log = open(os.path.join(folder, f"{name}.log"), "w+")
        self.process = subprocess.Popen([binary, "--port", "0", "--config", config, "--database", os.path.join(folder, f"{name}.sqlite")],
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            self.log.seek(0)
            match = re.search(r"address=127\.0\.0\.1:(\d+)", self.log.read())
            if match:
                self.port = int(match.group(1))
                return
            if self.process.poll() is not None:
                self.log.seek(0)
                sys.exit(f"node {name} exited: {self.log.read()}")
            time.sleep(0.05)
        self.stop()
        sys.exit(f"node {name} did not listen within 60 s")

    def metric(self, series):
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics").read().decode()
        for line in text.splitlines():
            if line.startswith(series + " "):
                return float(line.split()[-1])
        return 0.0

    def cpu_seconds(self):
        return cpu_seconds(self.process.pid)

    def stop(self):
        stop_process(self.process)
        self.log.close()


def put_donation(node, donation, volunteer, donor, state="BEING-LOOKED-FOR"):
    """Creates or updates `donation` through `node`'s backend API (PUT /v1/donations/ID); BEING-LOOKED-FOR makes
    it trackable at once, so `donor` may subscribe to it."""
    body = json.dumps({"donor": donor, "volunteer": volunteer, "state": state,
                       "home": {"lat": -34.6037, "lon": -58.3816}, "institution": {"lat": -34.5875, "lon": -58.4206, "name": "Caritas"}}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{node.port}/v1/donations/{donation}", data=body, method="PUT",
                                     headers={"Authorization": f"Bearer {BACKEND_KEY}", "Content-Type": "application/json"})
    urllib.request.urlopen(request).read()


class PublishLedger:
    """Matches each delivered position to its publish by what a donor sees of it: the channel and the fix's
    timestamp. A donor's `seq` is its donation's own number (docs/PROTOCOL.md, section 5.5), not the one in the
    volunteer's `ack`, so it cannot be the key. Each channel's timestamps strictly increase, so the key is unique."""

    def __init__(self):
        self.last_timestamp = {}
        self.pending = {}
        self.sent = {}

    def stamp(self, channel, message_id):
        """The timestamp for the next fix published on `channel` as `message_id`; its send time is noted."""
        timestamp = max(int(time.time() * 1000), self.last_timestamp.get(channel, 0) + 1)
        self.last_timestamp[channel] = timestamp
        self.pending[message_id] = ((channel, timestamp), time.perf_counter())
        return timestamp

    def acknowledged(self, message_id):
        """The broker acknowledged `message_id`: it now counts as sent, and as lost until delivered."""
        key, sent_at = self.pending.pop(message_id)
        self.sent[key] = sent_at

    @staticmethod
    def key(frame):
        """A delivered `position` frame's key."""
        return frame["channel"], frame["position"]["timestamp"]
