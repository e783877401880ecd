#!/usr/bin/env python3
"""The PubNub path under load, against a live broker on loopback, beside the WebSocket path (docs/BENCHMARKS.md,
"The PubNub path").

Three measurements, each on a broker of its own:
  latency:   DONORS donors, each watching its own volunteer with one held subscribe (raw HTTP/1.1 keep-alive, as
             the SDKs poll); volunteers publish in turn (PubNub GET publish) at RATE a second; the delay from
             sending a publish to its donor's answer arriving, p50 and p99, and the broker's CPU per publish and
             delivery (which on this path includes taking the donor's next poll).
  websocket: the same DONORS donors and volunteers over WebSocket (GET /v1/ws): each donor subscribes to its
             donation, each volunteer publishes on its own connection, in turn at RATE a second, the same number
             of publishes; the same delay (publish frame sent to position frame received) and CPU per publish
             and delivery.
  idle:      IDLE held polls with nothing to answer for SECONDS; the broker's CPU over that time, in % of one core.
             This broker holds a poll for 280 s (the most pubnub_hold_seconds allows), longer than the window
             and the setup before it, so no hold ends inside the window: it measures held polls only, never
             answering them (answered_in_window counts any that were, and should be 0).
Before each timed run of latency and websocket, every volunteer publishes once untimed, so that each is online
(a volunteer's first publish also sends presence) and the broker's per-channel state exists; then
max(1, 2000 // DONORS) rounds are timed. The CPU figures include the 2 s after the last publish.
A `comparison` line gives PubNub's CPU per delivery over the WebSocket path's (goal: within 3x).
Standard library only. Usage:
  pubnub_bench.py --broker .build/release/location-broker [--donors 1000] [--rate 200] [--idle 5000] [--seconds 60]
                  [--only latency,websocket,idle]
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import re
import shutil
import statistics
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_common import BACKEND_KEY, Node, cpu_seconds, token  # noqa: E402

HOST = "127.0.0.1"
IDLE_HOLD_SECONDS = 280
WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MEASUREMENTS = ("latency", "websocket", "idle")


class Broker:
    """A broker of its own for one measurement (`bench_common.Node`, in a folder removed when it stops), with room
    for `polls` held polls, each held `hold` seconds, and volunteers' publishes limited as a phone's are."""

    def __init__(self, binary, polls, hold=60):
        self.folder = tempfile.mkdtemp(prefix="pubnub-bench-")
        self.node = Node(binary, "pubnub", None, self.folder, settings={
            "LOCATION_BROKER_LOG_LEVEL": "info", "LOCATION_BROKER_PUBNUB_MAX_POLLS": str(polls + 100),
            "LOCATION_BROKER_PUBNUB_HOLD_SECONDS": str(hold),
            "LOCATION_BROKER_PUBLISH_RATE": "50", "LOCATION_BROKER_PUBLISH_BURST": "100"})
        self.port = self.node.port
        self.process = self.node.process

    def stop(self):
        self.node.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class Http:
    """One keep-alive HTTP/1.1 connection."""

    async def open(self, port):
        self.reader, self.writer = await asyncio.open_connection(HOST, port)
        return self

    def send(self, method, path, body=None, headers=""):
        data = body.encode() if body else b""
        self.writer.write(f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\n{headers}Content-Length: {len(data)}\r\n\r\n".encode() + data)

    async def answer(self):
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        return status, await self.reader.readexactly(length)

    async def request(self, method, path, body=None, headers=""):
        self.send(method, path, body, headers)
        return await self.answer()


class WebSocket:
    """A minimal RFC 6455 client: JSON out in masked text frames; text messages in, pings answered, a close raised,
    other frames skipped."""

    async def open(self, port, jwt):
        self.reader, self.writer = await asyncio.open_connection(HOST, port)
        key = base64.b64encode(os.urandom(16)).decode()
        self.writer.write((f"GET /v1/ws HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {jwt}\r\n\r\n").encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            raise SystemExit(f"the upgrade was answered {status}: {head!r}")
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest())
        found = re.search(rb"(?i)\r\nsec-websocket-accept: *(\S+)", head)
        if not found or found.group(1) != accept:
            raise SystemExit(f"the upgrade's Sec-WebSocket-Accept is not the key's: {head!r}")
        welcome = await self.receive()
        if welcome.get("type") != "welcome":
            raise SystemExit(f"the first frame is not welcome: {welcome}")
        return self

    def _write(self, opcode, payload):
        # A client masks every frame (RFC 6455 section 5.3); XOR as one big integer, not byte by byte.
        mask = os.urandom(4)
        size = len(payload)
        if size < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
        elif size < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
        keys = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(keys, "big")).to_bytes(size, "big")
        self.writer.write(head + mask + masked)

    def send(self, message):
        self._write(0x1, json.dumps(message, separators=(",", ":")).encode())

    async def receive(self):
        """The next text message, as JSON."""
        message = b""
        while True:
            first, second = await self.reader.readexactly(2)
            size = second & 0x7F
            if size == 126:
                size = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            if second & 0x80:
                raise ConnectionError("the server sent a masked frame")
            payload = await self.reader.readexactly(size)
            opcode = first & 0x0F
            if opcode == 0x9:
                self._write(0xA, payload)
            elif opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise ConnectionError(f"the server closed the WebSocket: {code} {payload[2:].decode(errors='replace')}")
            elif opcode in (0x1, 0x0):
                message += payload
                if first & 0x80:
                    return json.loads(message)

    def close(self):
        self.writer.close()


async def setup(broker, count, prefix):
    admin = await Http().open(broker.port)
    home = {"lat": -34.6037, "lon": -58.3816, "label": "x"}
    for index in range(count):
        body = json.dumps({"donor": f"{prefix}donor{index}@example.org", "volunteer": f"{prefix}vol{index}@example.org",
                           "state": "BEING-TAKEN-TO", "home": home, "institution": {"lat": -34.58, "lon": -58.42, "name": "y"}})
        status, answer = await admin.request("PUT", f"/v1/donations/{prefix}d{index}", body,
                                             f"Authorization: Bearer {BACKEND_KEY}\r\nContent-Type: application/json\r\n")
        assert status == 200, answer


async def handshake(broker, donor, channel):
    http = await Http().open(broker.port)
    status, body = await http.request("GET", f"/v2/subscribe/k/{channel}/0?tt=0&auth={donor}")
    assert status == 200, body
    return http, json.loads(body)["t"]["t"]


async def in_chunks(coroutines, size=250):
    """Awaits the coroutines a chunk at a time, so that connections are not all opened at once."""
    results = []
    for start in range(0, len(coroutines), size):
        results += await asyncio.gather(*coroutines[start:start + size])
    return results


def raise_failures(tasks):
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception():
            raise task.exception()


async def in_turn(donors, rate, count, publish, sent_at):
    """Publishes `count` times, volunteer 0, 1, ... in turn, paced to `rate` a second; stamps each send in
    `sent_at` when one is given."""
    started = time.perf_counter()
    for step in range(count):
        index = step % donors
        if sent_at is not None:
            sent_at[index] = time.perf_counter()
        await publish(index)
        await asyncio.sleep(max(0, started + (step + 1) / rate - time.perf_counter()))


async def measure(broker, donors, rate, publish, sent_at, delays, tasks):
    """One untimed publish per volunteer, then the timed rounds; the delays and the broker's CPU per delivery."""
    await in_turn(donors, rate, donors, publish, None)
    await asyncio.sleep(2)
    raise_failures(tasks)
    delays.clear()
    publishes = max(1, 2000 // donors) * donors
    cpu_before = cpu_seconds(broker.process.pid)
    await in_turn(donors, rate, publishes, publish, sent_at)
    await asyncio.sleep(2)
    cpu = cpu_seconds(broker.process.pid) - cpu_before
    raise_failures(tasks)
    if not delays:
        raise SystemExit(f"none of {publishes} publishes was delivered")
    delays.sort()
    return {"donors": donors, "publishes": publishes, "deliveries": len(delays),
            "p50_ms": round(statistics.median(delays) * 1000, 2), "p99_ms": round(delays[int(len(delays) * 0.99)] * 1000, 2),
            "cpu_us_per_publish_and_delivery": round(cpu / len(delays) * 1e6, 1)}


async def latency(binary, donors, rate):
    broker = Broker(binary, donors)
    try:
        await setup(broker, donors, "l")
        tokens = [(token(f"ldonor{i}@example.org", ttl=7200), token(f"lvol{i}@example.org", ttl=7200)) for i in range(donors)]
        polls = await in_chunks([handshake(broker, tokens[i][0], f"lvol{i}@example.org") for i in range(donors)])
        sent_at = {}
        delays = []

        async def watch(index):
            http, timetoken = polls[index]
            while True:
                status, body = await http.request("GET", f"/v2/subscribe/k/lvol{index}@example.org/0?tt={timetoken}&auth={tokens[index][0]}")
                arrived = time.perf_counter()
                assert status == 200, body
                answer = json.loads(body)
                timetoken = answer["t"]["t"]
                for _ in answer["m"]:
                    if index in sent_at:
                        delays.append(arrived - sent_at.pop(index))

        watchers = [asyncio.create_task(watch(i)) for i in range(donors)]
        await asyncio.sleep(2)
        publisher = await Http().open(broker.port)

        async def publish(index):
            message = f"%7B%22lat%22%3A-34.6%2C%22lng%22%3A-58.38%2C%22timestamp%22%3A{int(time.time() * 1000)}%7D"
            status, body = await publisher.request("GET", f"/publish/p/k/0/lvol{index}@example.org/0/{message}?auth={tokens[index][1]}")
            assert status == 200, body

        try:
            return await measure(broker, donors, rate, publish, sent_at, delays, watchers)
        finally:
            for task in watchers:
                task.cancel()
    finally:
        broker.stop()


async def websocket(binary, donors, rate):
    broker = Broker(binary, donors)
    sockets = []
    tasks = []
    try:
        await setup(broker, donors, "w")
        watching = await in_chunks([WebSocket().open(broker.port, token(f"wdonor{i}@example.org", ttl=7200)) for i in range(donors)])
        sockets += watching
        publishing = await in_chunks([WebSocket().open(broker.port, token(f"wvol{i}@example.org", ttl=7200)) for i in range(donors)])
        sockets += publishing
        for index, socket in enumerate(watching):
            socket.send({"type": "subscribe", "id": "s1", "donation": f"wd{index}"})
        for socket in watching:
            answer = await asyncio.wait_for(socket.receive(), 30)
            assert answer.get("type") == "subscribed" and answer.get("tracking"), answer
        sent_at = {}
        delays = []
        replies = [asyncio.Queue() for _ in range(donors)]

        async def watch(index):
            while True:
                frame = await watching[index].receive()
                arrived = time.perf_counter()
                if frame["type"] == "position" and index in sent_at:
                    delays.append(arrived - sent_at.pop(index))

        async def read_replies(index):
            # Read all the time: the broker stops reading a client that does not read, and pings come meanwhile.
            while True:
                replies[index].put_nowait(await publishing[index].receive())

        tasks += [asyncio.create_task(watch(i)) for i in range(donors)]
        tasks += [asyncio.create_task(read_replies(i)) for i in range(donors)]
        await asyncio.sleep(2)

        async def publish(index):
            publishing[index].send({"type": "publish", "id": "p1",
                                    "position": {"lat": -34.6, "lon": -58.38, "timestamp": int(time.time() * 1000)}})
            try:
                answer = await asyncio.wait_for(replies[index].get(), 30)
            except asyncio.TimeoutError:
                raise_failures(tasks)
                raise
            assert answer.get("type") == "ack" and answer.get("tracking") and answer.get("watchers") == 1, answer

        return await measure(broker, donors, rate, publish, sent_at, delays, tasks)
    finally:
        for task in tasks:
            task.cancel()
        for socket in sockets:
            socket.close()
        broker.stop()


async def idle(binary, count, seconds):
    if seconds + 60 > IDLE_HOLD_SECONDS:
        raise SystemExit(f"--seconds {seconds} leaves too little of the {IDLE_HOLD_SECONDS} s hold for the setup; use at most {IDLE_HOLD_SECONDS - 60}")
    broker = Broker(binary, count, hold=IDLE_HOLD_SECONDS)
    answered = []
    try:
        await setup(broker, count, "i")

        async def hold(index):
            donor = token(f"idonor{index}@example.org", ttl=7200)
            http, timetoken = await handshake(broker, donor, f"ivol{index}@example.org")
            http.send("GET", f"/v2/subscribe/k/ivol{index}@example.org/0?tt={timetoken}&auth={donor}")
            return http

        first_held = time.monotonic()
        held = await in_chunks([hold(i) for i in range(count)], 500)

        async def wait_answer(http):
            await http.answer()
            answered.append(time.monotonic())

        waiting = [asyncio.create_task(wait_answer(http)) for http in held]
        await asyncio.sleep(3)
        window_start = time.monotonic()
        before = cpu_seconds(broker.process.pid)
        await asyncio.sleep(seconds)
        used = cpu_seconds(broker.process.pid) - before
        window_end = time.monotonic()
        for task in waiting:
            task.cancel()
        if window_end - first_held >= IDLE_HOLD_SECONDS:
            raise SystemExit(f"the setup took {window_start - first_held:.0f} s: holds ended inside the window")
        return {"held_polls": count, "seconds": seconds, "cpu_percent_of_one_core": round(used / seconds * 100, 2),
                "answered_in_window": sum(1 for moment in answered if window_start <= moment <= window_end)}
    finally:
        broker.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", required=True)
    parser.add_argument("--donors", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--idle", type=int, default=5000)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--only", default=",".join(MEASUREMENTS), help="which measurements to run, comma-separated")
    arguments = parser.parse_args()
    only = arguments.only.split(",")
    unknown = set(only) - set(MEASUREMENTS)
    if unknown:
        parser.error(f"--only knows {', '.join(MEASUREMENTS)}, not {', '.join(sorted(unknown))}")
    results = {}
    if "latency" in only:
        results["latency"] = asyncio.run(latency(arguments.broker, arguments.donors, arguments.rate))
        print(json.dumps({"latency": results["latency"]}), flush=True)
    if "websocket" in only:
        results["websocket"] = asyncio.run(websocket(arguments.broker, arguments.donors, arguments.rate))
        print(json.dumps({"websocket": results["websocket"]}), flush=True)
    if "latency" in results and "websocket" in results:
        pubnub = results["latency"]["cpu_us_per_publish_and_delivery"]
        socket = results["websocket"]["cpu_us_per_publish_and_delivery"]
        print(json.dumps({"comparison": {"pubnub_cpu_us_per_delivery": pubnub, "websocket_cpu_us_per_delivery": socket,
                                         "pubnub_over_websocket": round(pubnub / socket, 2) if socket else None, "goal": "within 3x"}}), flush=True)
    if "idle" in only:
        print(json.dumps({"idle": asyncio.run(idle(arguments.broker, arguments.idle, arguments.seconds))}), flush=True)


if __name__ == "__main__":
    main()
