#!/usr/bin/env python3
"""The PubNub path under load, against a live broker on loopback (docs/BENCHMARKS.md, "The PubNub path").

Two measurements, each on a broker of its own:
  latency: DONORS donors, each watching its own volunteer with one held subscribe (raw HTTP/1.1 keep-alive, as
           the SDKs poll); volunteers publish in turn (PubNub GET publish) at RATE a second; the delay from sending
           a publish to its donor's answer arriving, p50 and p99, and the broker's CPU per delivery.
  idle:    IDLE held polls with nothing to answer for SECONDS; the broker's CPU over that time, in % of one core.
Standard library only. Usage:
  pubnub_bench.py --broker .build/release/location-broker [--donors 1000] [--rate 200] [--idle 5000] [--seconds 60]
"""

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import statistics
import subprocess
import tempfile
import time

HOST = "127.0.0.1"
TICKS = os.sysconf("SC_CLK_TCK")


def token(secret, identity):
    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).rstrip(b"=").decode()
    signed = part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": identity, "exp": int(time.time()) + 7200})
    return signed + "." + base64.urlsafe_b64encode(hmac.new(secret.encode(), signed.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Broker:
    def __init__(self, binary, polls):
        self.workdir = tempfile.mkdtemp(prefix="pubnub-bench-")
        self.secret = os.urandom(32).hex()
        self.backend = os.urandom(24).hex()
        env = dict(os.environ, LOCATION_BROKER_JWT_SECRET=self.secret, LOCATION_BROKER_BACKEND_KEY=self.backend,
                   LOCATION_BROKER_LOG_LEVEL="warning", LOCATION_BROKER_PUBNUB_MAX_POLLS=str(polls + 100),
                   LOCATION_BROKER_PUBNUB_HOLD_SECONDS="60", LOCATION_BROKER_PUBLISH_RATE="50", LOCATION_BROKER_PUBLISH_BURST="100")
        self.log = open(os.path.join(self.workdir, "broker.log"), "w+b")
        self.process = subprocess.Popen([binary, "--host", HOST, "--port", "0", "--log-level", "info",
                                         "--database", os.path.join(self.workdir, "b.sqlite")], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.log.seek(0)
            found = re.search(rb"address=127\.0\.0\.1:(\d+)", self.log.read())
            if found:
                self.port = int(found.group(1))
                return
            time.sleep(0.1)
        raise SystemExit("the broker did not start")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


class Http:
    """One keep-alive HTTP/1.1 connection."""

    async def open(self, port):
        self.reader, self.writer = await asyncio.open_connection(HOST, port)
        return self

    async def request(self, method, path, body=None, headers=""):
        data = body.encode() if body else b""
        self.writer.write(f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\n{headers}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        return status, await self.reader.readexactly(length)


async def setup(broker, count, prefix):
    admin = await Http().open(broker.port)
    home = {"lat": -34.6037, "lon": -58.3816, "label": "x"}
    for index in range(count):
        body = json.dumps({"donor": f"{prefix}donor{index}@example.org", "volunteer": f"{prefix}vol{index}@example.org",
                           "state": "BEING-TAKEN-TO", "home": home, "institution": {"lat": -34.58, "lon": -58.42, "name": "y"}})
        status, answer = await admin.request("PUT", f"/v1/donations/{prefix}d{index}", body,
                                             f"Authorization: Bearer {broker.backend}\r\nContent-Type: application/json\r\n")
        assert status == 200, answer


async def handshake(broker, donor, channel):
    http = await Http().open(broker.port)
    status, body = await http.request("GET", f"/v2/subscribe/k/{channel}/0?tt=0&auth={donor}")
    assert status == 200, body
    return http, json.loads(body)["t"]["t"]


async def latency(binary, donors, rate):
    broker = Broker(binary, donors)
    try:
        await setup(broker, donors, "l")
        tokens = [(token(broker.secret, f"ldonor{i}@example.org"), token(broker.secret, f"lvol{i}@example.org")) for i in range(donors)]
        polls = await asyncio.gather(*(handshake(broker, tokens[i][0], f"lvol{i}@example.org") for i in range(donors)))
        sent_at = {}
        delays = []

        async def watch(index):
            http, timetoken = polls[index]
            while True:
                status, body = await http.request("GET", f"/v2/subscribe/k/lvol{index}@example.org/0?tt={timetoken}&auth={tokens[index][0]}")
                arrived = time.perf_counter()
                answer = json.loads(body)
                timetoken = answer["t"]["t"]
                for _ in answer["m"]:
                    if index in sent_at:
                        delays.append(arrived - sent_at.pop(index))

        watchers = [asyncio.create_task(watch(i)) for i in range(donors)]
        await asyncio.sleep(2)
        publisher = await Http().open(broker.port)
        cpu_before = cpu_seconds(broker.process.pid)
        started = time.perf_counter()
        rounds = max(1, 2000 // donors)
        for step in range(rounds * donors):
            index = step % donors
            message = f"%7B%22lat%22%3A-34.6%2C%22lng%22%3A-58.38%2C%22timestamp%22%3A{int(time.time() * 1000)}%7D"
            sent_at[index] = time.perf_counter()
            status, _ = await publisher.request("GET", f"/publish/p/k/0/lvol{index}@example.org/0/{message}?auth={tokens[index][1]}")
            assert status == 200
            await asyncio.sleep(max(0, started + (step + 1) / rate - time.perf_counter()))
        await asyncio.sleep(2)
        cpu = cpu_seconds(broker.process.pid) - cpu_before
        for task in watchers:
            task.cancel()
        delays.sort()
        return {"donors": donors, "deliveries": len(delays), "p50_ms": round(statistics.median(delays) * 1000, 2),
                "p99_ms": round(delays[int(len(delays) * 0.99)] * 1000, 2),
                "cpu_us_per_publish_and_delivery": round(cpu / max(1, len(delays)) * 1e6, 1)}
    finally:
        broker.stop()


async def idle(binary, count, seconds):
    broker = Broker(binary, count)
    try:
        await setup(broker, count, "i")
        held = []
        for start in range(0, count, 500):
            held += await asyncio.gather(*(handshake(broker, token(broker.secret, f"idonor{i}@example.org"), f"ivol{i}@example.org")
                                           for i in range(start, min(count, start + 500))))
        for index, (http, timetoken) in enumerate(held):
            path = f"/v2/subscribe/k/ivol{index}@example.org/0?tt={timetoken}&auth={token(broker.secret, f'idonor{index}@example.org')}"
            http.writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
        await asyncio.sleep(3)
        before = cpu_seconds(broker.process.pid)
        await asyncio.sleep(seconds)
        used = cpu_seconds(broker.process.pid) - before
        return {"held_polls": count, "seconds": seconds, "cpu_percent_of_one_core": round(used / seconds * 100, 2)}
    finally:
        broker.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", required=True)
    parser.add_argument("--donors", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--idle", type=int, default=5000)
    parser.add_argument("--seconds", type=int, default=60)
    arguments = parser.parse_args()
    print(json.dumps({"latency": asyncio.run(latency(arguments.broker, arguments.donors, arguments.rate))}))
    print(json.dumps({"idle": asyncio.run(idle(arguments.broker, arguments.idle, arguments.seconds))}))


if __name__ == "__main__":
    main()
