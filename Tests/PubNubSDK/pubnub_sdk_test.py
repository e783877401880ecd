#!/usr/bin/env python3
"""PubNub's own Python SDK (pubnub==7.2.0, the last MIT release) against a live broker: only `origin` and the auth
key changed.

Starts location-broker on a free 127.0.0.1 port (log level trace), tells it about donations as the backend would,
and checks, with the SDK on both ends:
  - a volunteer's SDK publishes {"lat","lng","accuracy","timestamp"} and the donor's SDK receives it, in that shape;
  - another donor's SDK is denied (the SDK reports access denied) and receives nothing;
  - a publish on another identity's channel is denied;
  - a fix stamped before the donation's window reaches nobody;
  - a paused donation delivers nothing, and what was published during the pause is not delivered after it;
  - a donation that is delivered is access denied at the donor's next poll;
  - an SDK that reconnects with its last timetoken receives what it missed, once;
  - a trip that outlives the donor's first token: the SDK is refused as PubNub's Access Manager refuses an
    expired token (403, no channels named), the app renews its token and resubscribes from its last timetoken,
    and every position arrives, once;
  - two channels in one subscribe: both watched, each delivers its own; one of them forbidden, the subscribe is
    refused with that channel named in `payload.channels`;
  - `with_presence`: the presence channels never fail the subscribe, and the positions arrive;
  - no token in `auth` appears in the broker's log, at any level.
Usage: pubnub_sdk_test.py --broker PATH
"""

import argparse
import base64
import glob
import hashlib
import hmac
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from pubnub.callbacks import SubscribeCallback
from pubnub.enums import PNStatusCategory
from pubnub.exceptions import PubNubException
from pubnub.pnconfiguration import PNConfiguration
from pubnub.pubnub import PubNub

HOST = "127.0.0.1"
HOME = {"lat": -34.6037, "lon": -58.3816, "label": "Av. Corrientes 1234"}
INSTITUTION = {"lat": -34.5875, "lon": -58.4206, "name": "Caritas Palermo"}


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def now_ms():
    return int(time.time() * 1000)


class Broker:
    """location-broker as a child process, with its secrets, database and log in `workdir`."""

    def __init__(self, binary, workdir, name="broker", like=None, extra_env=None):
        """`like`: another broker whose secrets this one shares (a node of the same cluster)."""
        self.binary = binary
        self.workdir = workdir
        self.name = name
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.backend_key = like.backend_key if like else os.urandom(24).hex()
        self.env = dict(os.environ)
        self.jwt_secret = like.jwt_secret if like else os.urandom(32).hex()
        self.env.update({
            "LOCATION_BROKER_JWT_SECRET": self.jwt_secret,
            "LOCATION_BROKER_BACKEND_KEY": self.backend_key,
            # Every level, so that the check on tokens covers every log line the broker can write.
            "LOCATION_BROKER_LOG_LEVEL": "trace",
            "LOCATION_BROKER_PUBLISH_RATE": "20",
            "LOCATION_BROKER_PUBLISH_BURST": "40",
            # Empty long polls come back after 3 s, so a test sees several polls go by.
            "LOCATION_BROKER_PUBNUB_HOLD_SECONDS": "3",
        })
        self.env.update(extra_env or {})
        self.process = None
        self.port = 0

    def start(self):
        with open(self.log_path, "ab") as output:
            self.process = subprocess.Popen(
                [self.binary, "--host", HOST, "--port", "0", "--database", os.path.join(self.workdir, f"{self.name}.sqlite")],
                cwd=self.workdir, env=self.env, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as logfile:
                found = re.search(rb"address=127\.0\.0\.1:(\d+)", logfile.read())
            if found:
                self.port = int(found.group(1))
                return
            check(self.process.poll() is None, "the broker did not start:\n" + self.log())
            time.sleep(0.1)
        raise CheckFailed("the broker did not say it was listening within 60 s")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def log(self):
        with open(self.log_path, "r", errors="replace") as logfile:
            return logfile.read()

    def token(self, identity):
        result = subprocess.run([self.binary, "token", "--identity", identity, "--ttl", "3600"], cwd=self.workdir, env=self.env,
                                capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, "could not mint a token: " + result.stderr)
        return result.stdout.strip()

    def token_expiring_in(self, identity, seconds):
        """A token that the broker takes for `seconds` more: its `exp` already past by the broker's leeway (30 s,
        TokenLeeway) less `seconds`, so that its expiry comes within the test (HS256, as `token` signs)."""
        def part(value):
            return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).rstrip(b"=").decode()
        signed = part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": identity, "exp": int(time.time()) - 30 + seconds})
        signature = hmac.new(self.jwt_secret.encode(), signed.encode(), hashlib.sha256).digest()
        return signed + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()

    def donation(self, donation_id, donor, volunteer, state):
        body = json.dumps({"donor": donor, "volunteer": volunteer, "state": state, "home": HOME, "institution": INSTITUTION}).encode()
        request = urllib.request.Request(f"http://{HOST}:{self.port}/v1/donations/{donation_id}", data=body, method="PUT",
                                         headers={"Authorization": f"Bearer {self.backend_key}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                check(response.status == 200, f"PUT {donation_id} answered {response.status}")
        except urllib.error.HTTPError as error:
            raise CheckFailed(f"PUT {donation_id} {state} answered {error.code}: {error.read().decode()}")


class Postgres:
    """A throwaway PostgreSQL server for a two-node cluster, from the Debian package's binaries, on a free port,
    in a folder of its own (as Tests/BrokerTestSupport/PostgresServer.swift does); run as `postgres` under root,
    which initdb refuses."""

    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        check(bins, "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (the Debian package postgresql)")
        self.bin = bins[-1]
        self.folder = tempfile.mkdtemp(prefix="pubnub-sdk-postgres-")
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        with socket.socket() as probe:
            probe.bind((HOST, 0))
            self.port = probe.getsockname()[1]
        self.started = False

    def run(self, executable, *arguments):
        command = [os.path.join(self.bin, executable), *arguments]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        check(result.returncode == 0, f"{executable} failed: {result.stdout}{result.stderr}")
        return result.stdout

    def start(self):
        data = os.path.join(self.folder, "data")
        self.run("initdb", "-D", data, "-U", "lb", "-A", "trust", "--no-sync", "-E", "UTF8")
        self.run("pg_ctl", "-D", data, "-l", os.path.join(self.folder, "server.log"), "-w", "-t", "30", "-o",
                 f"-p {self.port} -k {self.folder} -c listen_addresses={HOST} -c fsync=off", "start")
        self.started = True
        self.run("psql", "-h", HOST, "-p", str(self.port), "-U", "lb", "-d", "postgres", "-c", "CREATE DATABASE lb_sdk")
        return f"postgres://lb@{HOST}:{self.port}/lb_sdk"

    def stop(self):
        if self.started:
            self.run("pg_ctl", "-D", os.path.join(self.folder, "data"), "-m", "immediate", "-w", "stop")
            self.started = False
        shutil.rmtree(self.folder, ignore_errors=True)


class Listener(SubscribeCallback):
    """Everything one SDK's subscription hears."""

    def __init__(self):
        self.messages = queue.Queue()
        self.statuses = []
        self.connected = threading.Event()
        self.denied = threading.Event()
        # The body of the last refusal, as the SDK hands it to the app (status.original_response).
        self.refusal = None

    def status(self, pubnub, status):
        self.statuses.append(status.category)
        if status.category == PNStatusCategory.PNConnectedCategory:
            self.connected.set()
        if status.category == PNStatusCategory.PNAccessDeniedCategory:
            self.refusal = status.original_response
            self.denied.set()

    def message(self, pubnub, message):
        self.messages.put(message)

    def presence(self, pubnub, presence):
        pass

    def next_message(self, seconds):
        try:
            return self.messages.get(timeout=seconds)
        except queue.Empty:
            return None

    def drain(self, seconds):
        """Every message that arrives within `seconds`."""
        deadline = time.monotonic() + seconds
        got = []
        while (left := deadline - time.monotonic()) > 0:
            message = self.next_message(left)
            if message is not None:
                got.append(message)
        return got


class SDK:
    """One app: PubNub's SDK with the broker as origin and a broker token as auth key."""

    def __init__(self, broker, identity, token=None):
        config = PNConfiguration()
        config.publish_key = "pub-key"
        config.subscribe_key = "sub-key"
        config.user_id = f"device-{identity}"
        config.origin = f"{HOST}:{broker.port}"
        config.ssl = False
        config.auth_key = token or broker.token(identity)
        self.token = config.auth_key
        self.tokens = [self.token]
        self.identity = identity
        self.pubnub = PubNub(config)
        self.listener = Listener()
        self.pubnub.add_listener(self.listener)
        self.stopped = False

    def publish(self, message, channel=None):
        return self.pubnub.publish().channel(channel or self.identity).message(message).sync()

    def subscribe(self, channel, timetoken=None, presence=False):
        builder = self.pubnub.subscribe().channels(channel if isinstance(channel, list) else [channel])
        if timetoken is not None:
            builder = builder.with_timetoken(timetoken)
        if presence:
            builder = builder.with_presence()
        builder.execute()

    def stop(self):
        """Unsubscribes (the SDK sends leave) and stops the SDK's threads; once (the SDK's unsubscribe_all fails
        when called twice)."""
        if self.stopped:
            return
        self.stopped = True
        try:
            self.pubnub.unsubscribe_all()
        finally:
            self.pubnub.stop()


def fix(lat, taken_at=None):
    return {"lat": lat, "lng": -58.3816, "accuracy": 5, "timestamp": taken_at or now_ms()}


def scenario_publish_subscribe_and_refusals(broker, sdks):
    volunteer = SDK(broker, "vol-a@example.org")
    donor = SDK(broker, "donor-a@example.org")
    stranger = SDK(broker, "donor-b@example.org")
    sdks += [volunteer, donor, stranger]
    broker.donation("d-a", donor.identity, volunteer.identity, "BEING-LOOKED-FOR")
    broker.donation("d-other", stranger.identity, "vol-z@example.org", "BEING-LOOKED-FOR")
    time.sleep(0.1)

    donor.subscribe(volunteer.identity)
    check(donor.listener.connected.wait(10), f"the donor's SDK did not connect: {donor.listener.statuses}")
    stranger.subscribe(volunteer.identity)
    check(stranger.listener.denied.wait(10), f"another donor's SDK was not denied: {stranger.listener.statuses}")

    sent = volunteer.publish(fix(-34.60))
    check(int(sent.result.timetoken) > 0, f"the publish's timetoken is {sent.result.timetoken}")
    got = donor.listener.next_message(10)
    check(got is not None, "the donor's SDK received nothing")
    check(got.channel == volunteer.identity, f"the message came on {got.channel}")
    check(abs(got.message["lat"] - (-34.60)) < 1e-9 and abs(got.message["lng"] - (-58.3816)) < 1e-9, f"the message is {got.message}")
    check(got.message["accuracy"] == 5, f"the accuracy is {got.message}")
    check(set(got.message) == {"lat", "lng", "accuracy", "timestamp"}, f"the message is not in the shape the volunteer published: {got.message}")
    # The donor's message carries its number in the donor's own view, not the volunteer's (docs/PROTOCOL.md, 5.5).
    check(int(got.timetoken) > 1, f"the message's timetoken is {got.timetoken}")
    print("ok: a volunteer's SDK publishes, the donor's SDK receives; another donor's SDK is denied")

    try:
        volunteer.publish(fix(-34.61), channel=donor.identity)
        raise CheckFailed("a publish on another identity's channel was accepted")
    except PubNubException as error:
        check(error._status_code == 403, f"a publish on another's channel answered {error._status_code}")
    try:
        volunteer.publish({"lat": 95, "lng": 0, "timestamp": now_ms()})
        raise CheckFailed("a latitude of 95 was accepted")
    except PubNubException as error:
        check(error._status_code == 400, f"a latitude of 95 answered {error._status_code}")
    try:
        volunteer.publish({"lat": -34.6, "lng": -58.38})
        raise CheckFailed("a fix without its time was accepted (it would be stamped on arrival, however late)")
    except PubNubException as error:
        check(error._status_code == 400, f"a fix without its time answered {error._status_code}")
    print("ok: a publish on another's channel is denied; an out-of-range position and one without its time are refused")

    # Stamped a minute before the window opened: kept for nobody. The marker after it proves the poll goes on.
    volunteer.publish(fix(-34.62, taken_at=now_ms() - 60_000))
    volunteer.publish(fix(-34.63))
    got = donor.listener.drain(4)
    check([round(m.message["lat"], 4) for m in got] == [-34.63], f"before the window: the donor got {[m.message for m in got]}")
    check(not stranger.listener.messages.qsize(), "the denied SDK received a message")
    print("ok: a fix stamped before the window reaches nobody")

    broker.donation("d-a", donor.identity, volunteer.identity, "PICKED-BY-VOLUNTEER")
    volunteer.publish(fix(-34.64))
    check(donor.listener.drain(4) == [], "a paused donation delivered a position")
    broker.donation("d-a", donor.identity, volunteer.identity, "BEING-TAKEN-TO")
    volunteer.publish(fix(-34.65))
    got = donor.listener.drain(4)
    check([round(m.message["lat"], 4) for m in got] == [-34.65], f"after the pause the donor got {[m.message for m in got]}")
    print("ok: a paused donation delivers nothing, not even after the resume")

    broker.donation("d-a", donor.identity, volunteer.identity, "DELIVERED")
    check(donor.listener.denied.wait(5), f"a delivered donation was not denied at the next poll: {donor.listener.statuses}")
    volunteer.publish(fix(-34.66))
    check(donor.listener.drain(2) == [], "a delivered donation delivered a position")
    print("ok: a delivered donation is access denied at the donor's next poll")
    return [volunteer.token, donor.token, stranger.token]


def scenario_reconnect(broker, sdks):
    volunteer = SDK(broker, "vol-c@example.org")
    donor = SDK(broker, "donor-c@example.org")
    sdks += [volunteer, donor]
    broker.donation("d-c", donor.identity, volunteer.identity, "BEING-TAKEN-TO")
    time.sleep(0.1)
    donor.subscribe(volunteer.identity)
    check(donor.listener.connected.wait(10), f"the donor's SDK did not connect: {donor.listener.statuses}")
    volunteer.publish(fix(-34.70))
    first = donor.listener.next_message(10)
    check(first is not None, "the donor's SDK received nothing before going away")
    donor.stop()

    volunteer.publish(fix(-34.71))
    volunteer.publish(fix(-34.72))
    again = SDK(broker, donor.identity, token=donor.token)
    sdks.append(again)
    again.subscribe(volunteer.identity, timetoken=first.timetoken)
    # Over two empty long polls (3 s each): anything delivered twice would show.
    got = again.listener.drain(8)
    check([round(m.message["lat"], 4) for m in got] == [-34.71, -34.72], f"after reconnecting the donor got {[m.message for m in got]}")
    print("ok: an SDK that reconnects with its last timetoken receives what it missed, once")
    return [volunteer.token, donor.token]


def token_refused(refusal):
    """The app's rule: a 403 that names no channel is the token's (renew it); one that names channels means the
    donation may not be watched any more."""
    return isinstance(refusal, dict) and refusal.get("code") == "unauthorized" and not (refusal.get("payload") or {}).get("channels")


def scenario_token_renewal(broker, sdks):
    volunteer = SDK(broker, "vol-r@example.org")
    donor = SDK(broker, "donor-r@example.org", token=broker.token_expiring_in("donor-r@example.org", 4))
    sdks += [volunteer, donor]
    broker.donation("d-r", donor.identity, volunteer.identity, "BEING-TAKEN-TO")
    time.sleep(0.1)
    donor.subscribe(volunteer.identity)
    check(donor.listener.connected.wait(10), f"the donor's SDK did not connect: {donor.listener.statuses}")
    sent = []
    received = []
    renewed = False
    # Ten seconds of fixes, two a second: the token expires after four.
    for index in range(20):
        lat = round(-34.80 - index * 0.001, 4)
        volunteer.publish(fix(lat))
        sent.append(lat)
        time.sleep(0.5)
        while (message := donor.listener.next_message(0)) is not None:
            received.append(message)
        if donor.listener.denied.is_set() and not renewed:
            check(token_refused(donor.listener.refusal), f"the expired token was refused as something else: {donor.listener.refusal}")
            renewed = True
            # What the React Native example does: a new token (setAuthKey), and a subscribe from the last timetoken.
            donor.pubnub.config.auth_key = broker.token(donor.identity)
            donor.tokens.append(donor.pubnub.config.auth_key)
            donor.listener.denied.clear()
            # The SDK tells the app before it unsubscribes everything: resubscribing earlier would be undone.
            deadline = time.monotonic() + 5
            while donor.pubnub.get_subscribed_channels() and time.monotonic() < deadline:
                time.sleep(0.05)
            donor.subscribe(volunteer.identity, timetoken=received[-1].timetoken if received else None)
    check(renewed, f"the donor's first token never expired mid-trip: {donor.listener.statuses}")
    received += donor.listener.drain(4)
    got = [round(m.message["lat"], 4) for m in received]
    check(got == sent, f"across the renewal the donor got {got}, not every position once: {sent}")
    print("ok: a trip that outlives the donor's first token: refused as an expired token, renewed, every position once")
    return [volunteer.token] + donor.tokens


def scenario_two_channels(broker, sdks):
    first = SDK(broker, "vol-m1@example.org")
    second = SDK(broker, "vol-m2@example.org")
    donor = SDK(broker, "donor-m@example.org")
    nosy = SDK(broker, "donor-n@example.org")
    sdks += [first, second, donor, nosy]
    broker.donation("d-m1", donor.identity, first.identity, "BEING-TAKEN-TO")
    broker.donation("d-m2", donor.identity, second.identity, "BEING-LOOKED-FOR")
    broker.donation("d-n", nosy.identity, first.identity, "BEING-TAKEN-TO")
    time.sleep(0.1)

    nosy.subscribe([first.identity, second.identity])
    check(nosy.listener.denied.wait(10), f"a subscribe with a forbidden channel was not denied: {nosy.listener.statuses}")
    named = (nosy.listener.refusal or {}).get("payload", {}).get("channels")
    check(named == [second.identity], f"the refusal names {named}, not the forbidden channel alone: {nosy.listener.refusal}")
    print("ok: two channels in one subscribe, one forbidden: refused with that channel named, as Access Manager does")

    donor.subscribe([first.identity, second.identity])
    check(donor.listener.connected.wait(10), f"the donor's SDK did not connect to two channels: {donor.listener.statuses}")
    first.publish(fix(-34.50))
    second.publish(fix(-34.40))
    first.publish(fix(-34.51))
    got = donor.listener.drain(5)
    by_channel = {}
    for message in got:
        by_channel.setdefault(message.channel, []).append(round(message.message["lat"], 4))
    check(by_channel == {first.identity: [-34.50, -34.51], second.identity: [-34.40]}, f"two channels delivered {by_channel}")
    print("ok: two channels in one subscribe: each delivers its own, once")
    return [first.token, second.token, donor.token, nosy.token]


def scenario_with_presence(broker, sdks):
    volunteer = SDK(broker, "vol-p@example.org")
    donor = SDK(broker, "donor-p@example.org")
    sdks += [volunteer, donor]
    broker.donation("d-p", donor.identity, volunteer.identity, "BEING-TAKEN-TO")
    time.sleep(0.1)
    donor.subscribe(volunteer.identity, presence=True)
    check(donor.listener.connected.wait(10), f"a subscribe with presence did not connect: {donor.listener.statuses}")
    volunteer.publish(fix(-34.30))
    got = donor.listener.drain(4)
    check([round(m.message["lat"], 4) for m in got] == [-34.30], f"with presence the donor got {[m.message for m in got]}")
    check(PNStatusCategory.PNAccessDeniedCategory not in donor.listener.statuses, f"with presence: {donor.listener.statuses}")
    print("ok: with_presence: the presence channel never fails the subscribe; positions arrive")
    return [volunteer.token, donor.token]


def scenario_cluster(binary, workdir, sdks):
    """Two nodes on one PostgreSQL: the volunteer's SDK publishes on node a, the donor's SDK subscribes on node b."""
    postgres = Postgres()
    nodes = []
    tokens = []
    try:
        store = postgres.start()
        secret = os.urandom(32).hex()
        for name in ["a", "b"]:
            node = Broker(binary, workdir, name=f"node-{name}", like=nodes[0] if nodes else None, extra_env={
                "LOCATION_BROKER_STORE": store, "LOCATION_BROKER_NODE_ID": name, "LOCATION_BROKER_CLUSTER_SECRET": secret,
                "LOCATION_BROKER_CLUSTER_HEARTBEAT_SECONDS": "2"})
            nodes.append(node)
            node.start()
        a, b = nodes
        volunteer = SDK(a, "vol-k@example.org")
        donor = SDK(b, "donor-k@example.org", token=a.token("donor-k@example.org"))
        sdks += [volunteer, donor]
        a.donation("d-k", donor.identity, volunteer.identity, "BEING-TAKEN-TO")
        # Node b hears of the donation through the bus: wait for it before the SDK, which stops at a refusal.
        deadline = time.monotonic() + 15
        while True:
            url = f"http://{HOST}:{b.port}/v2/subscribe/sub-key/{volunteer.identity}/0?tt=0&auth={donor.token}"
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    if response.status == 200:
                        break
            except urllib.error.HTTPError:
                pass
            check(time.monotonic() < deadline, "node b never learnt of the donation made on node a")
            time.sleep(0.2)
        donor.subscribe(volunteer.identity)
        check(donor.listener.connected.wait(10), f"the donor's SDK did not connect to node b: {donor.listener.statuses}")
        time.sleep(1)
        for lat in [-34.20, -34.21]:
            volunteer.publish(fix(lat))
        got = donor.listener.drain(6)
        check([round(m.message["lat"], 4) for m in got] == [-34.20, -34.21], f"on node b the donor got {[m.message for m in got]}")
        print("ok: a two-node cluster: published through node a, received through node b, once each")
        tokens = [volunteer.token, donor.token]
        for sdk in (volunteer, donor):
            sdk.stop()
        for node in nodes:
            node.stop()
        for node in nodes:
            log = node.log()
            for token in tokens:
                check(token not in log and token.rsplit(".", 1)[-1] not in log, f"a token in auth reached {node.name}'s log")
        return tokens
    except CheckFailed:
        for node in nodes:
            try:
                print(f"--- {node.name}'s log:\n" + node.log()[-3000:], file=sys.stderr)
            except OSError:
                pass
        raise
    finally:
        for node in nodes:
            node.stop()
        postgres.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", required=True)
    arguments = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="pubnub-sdk-test-")
    broker = Broker(os.path.abspath(arguments.broker), workdir)
    sdks = []
    status = 0
    try:
        broker.start()
        tokens = scenario_publish_subscribe_and_refusals(broker, sdks)
        tokens += scenario_reconnect(broker, sdks)
        tokens += scenario_token_renewal(broker, sdks)
        tokens += scenario_two_channels(broker, sdks)
        tokens += scenario_with_presence(broker, sdks)
        tokens += scenario_cluster(broker.binary, workdir, sdks)
        for sdk in sdks:
            sdk.stop()
        sdks = []
        broker.stop()
        log = broker.log()
        check(re.search(r" (debug|trace) ", log), "the broker's log has no debug or trace line: the level was not in effect")
        for token in tokens:
            signature = token.rsplit(".", 1)[-1]
            check(token not in log and signature not in log, "a token in auth reached the broker's log")
        print("ok: no token in auth reaches the broker's log (level trace)")
        print("pubnub-sdk-test: all checks passed")
    except CheckFailed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        try:
            print(broker.log()[-4000:], file=sys.stderr)
        except OSError:
            pass
        status = 1
    finally:
        for sdk in sdks:
            try:
                sdk.stop()
            except Exception:
                pass
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
