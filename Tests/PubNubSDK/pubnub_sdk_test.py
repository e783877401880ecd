#!/usr/bin/env python3
"""PubNub's own Python SDK (pubnub==10.8.0) against a live broker: only `origin` and the auth key changed.

Starts location-broker on a free 127.0.0.1 port (log level trace), tells it about donations as the backend would,
and checks, with the SDK on both ends:
  - a volunteer's SDK publishes {"lat","lng","accuracy"} and the donor's SDK receives it, in that shape;
  - another donor's SDK is denied (the SDK reports access denied) and receives nothing;
  - a publish on another identity's channel is denied;
  - a fix stamped before the donation's window reaches nobody;
  - a paused donation delivers nothing, and what was published during the pause is not delivered after it;
  - a donation that is delivered is access denied at the donor's next poll;
  - an SDK that reconnects with its last timetoken receives what it missed, once;
  - no token in `auth` appears in the broker's log, at any level.
Usage: pubnub_sdk_test.py --broker PATH
"""

import argparse
import json
import os
import queue
import re
import shutil
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

    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir
        self.log_path = os.path.join(workdir, "broker.log")
        self.backend_key = os.urandom(24).hex()
        self.env = dict(os.environ)
        self.env.update({
            "LOCATION_BROKER_JWT_SECRET": os.urandom(32).hex(),
            "LOCATION_BROKER_BACKEND_KEY": self.backend_key,
            # Every level, so that the check on tokens covers every log line the broker can write.
            "LOCATION_BROKER_LOG_LEVEL": "trace",
            "LOCATION_BROKER_PUBLISH_RATE": "20",
            "LOCATION_BROKER_PUBLISH_BURST": "40",
            # Empty long polls come back after 3 s, so a test sees several polls go by.
            "LOCATION_BROKER_PUBNUB_HOLD_SECONDS": "3",
        })
        self.process = None
        self.port = 0

    def start(self):
        with open(self.log_path, "ab") as output:
            self.process = subprocess.Popen(
                [self.binary, "--host", HOST, "--port", "0", "--database", os.path.join(self.workdir, "broker.sqlite")],
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

    def donation(self, donation_id, donor, volunteer, state):
        body = json.dumps({"donor": donor, "volunteer": volunteer, "state": state, "home": HOME, "institution": INSTITUTION}).encode()
        request = urllib.request.Request(f"http://{HOST}:{self.port}/v1/donations/{donation_id}", data=body, method="PUT",
                                         headers={"Authorization": f"Bearer {self.backend_key}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                check(response.status == 200, f"PUT {donation_id} answered {response.status}")
        except urllib.error.HTTPError as error:
            raise CheckFailed(f"PUT {donation_id} {state} answered {error.code}: {error.read().decode()}")


class Listener(SubscribeCallback):
    """Everything one SDK's subscription hears."""

    def __init__(self):
        self.messages = queue.Queue()
        self.statuses = []
        self.connected = threading.Event()
        self.denied = threading.Event()

    def status(self, pubnub, status):
        self.statuses.append(status.category)
        if status.category == PNStatusCategory.PNConnectedCategory:
            self.connected.set()
        if status.category == PNStatusCategory.PNAccessDeniedCategory:
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
        self.identity = identity
        self.pubnub = PubNub(config)
        self.listener = Listener()
        self.pubnub.add_listener(self.listener)
        self.stopped = False

    def publish(self, message, channel=None):
        return self.pubnub.publish().channel(channel or self.identity).message(message).sync()

    def subscribe(self, channel, timetoken=None):
        builder = self.pubnub.subscribe().channels([channel])
        if timetoken is not None:
            builder = builder.with_timetoken(timetoken)
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
    message = {"lat": lat, "lng": -58.3816, "accuracy": 5}
    if taken_at is not None:
        message["timestamp"] = taken_at
    return message


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
    check(set(got.message) == {"lat", "lng", "accuracy"}, f"the message is not in the shape the volunteer published: {got.message}")
    check(str(got.timetoken) == str(sent.result.timetoken), f"timetokens differ: {got.timetoken} vs {sent.result.timetoken}")
    print("ok: a volunteer's SDK publishes, the donor's SDK receives; another donor's SDK is denied")

    try:
        volunteer.publish(fix(-34.61), channel=donor.identity)
        raise CheckFailed("a publish on another identity's channel was accepted")
    except PubNubException as error:
        check(error._status_code == 403, f"a publish on another's channel answered {error._status_code}")
    try:
        volunteer.publish({"lat": 95, "lng": 0})
        raise CheckFailed("a latitude of 95 was accepted")
    except PubNubException as error:
        check(error._status_code == 400, f"a latitude of 95 answered {error._status_code}")
    print("ok: a publish on another's channel is denied; an out-of-range position is refused")

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
