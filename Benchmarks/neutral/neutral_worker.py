"""One load process of neutral_bench.py: opens its share of the connections with the `websockets` client, then
does what the coordinator asks over its pipe (publish for a while, report its counts, run a connect storm, close)
and answers each request with one dict.

Every connection is opened the way an application using `websockets` opens one: `websockets.asyncio.client.connect`
with its default request (`Upgrade`, `Connection`, `Sec-WebSocket-Key`, `Sec-WebSocket-Version: 13`,
`Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits`, `User-Agent: Python/x.y websockets/x.y`)
plus `Authorization: Bearer <JWT>` for the broker. Only the TCP socket is made here, so that it can come from
this worker's own 127.0.0.x address (IP_BIND_ADDRESS_NO_PORT: the port is picked at connect for the whole
address pair, so ports held in TIME_WAIT by an earlier run do not run out). Keepalive pings are off, so that a
measured window is not charged with them; reads are never paused (`max_queue=None`), so a slow driver queues
frames on its side instead of pushing back on the server.
"""
import asyncio
import json
import os
import signal
import socket
import sys
import time

import websockets
from websockets.asyncio.client import connect

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
import neutral_frames as frames  # noqa: E402
from bench_common import percentile, token  # noqa: E402

IP_BIND_ADDRESS_NO_PORT = 24  # linux/in.h; not in Python's socket module
BATCH = 200  # publishes sent before the loop lets the readers run


def run(pipe, plan):
    """The process's entry: runs the worker on uvloop when it is installed, else on asyncio's own loop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator stops this process; Ctrl-C is its to handle
    try:
        import uvloop
    except ImportError:
        uvloop = None
    (uvloop.run if uvloop else asyncio.run)(Worker(pipe, plan).main())


class Publisher:
    """A publishing connection: its socket, the channel its frames name, and how many it has sent."""

    def __init__(self, ws, channel):
        self.ws = ws
        self.channel = channel
        self.sent = 0


class Worker:
    def __init__(self, pipe, plan):
        self.pipe = pipe
        self.plan = plan
        self.broker = plan["kind"] == "broker"
        self.publishers = []
        self.subscribers = []
        self.storm = []
        self.storm_plan = []
        self.readers = []
        self.closing = False
        self.published = 0
        self.received = 0
        self.other_frames = {}
        self.refusals = {}
        self.closed_early = 0
        self.sent_bytes = None
        self.delivered_bytes = None

    async def main(self):
        loop = asyncio.get_running_loop()
        try:
            try:
                ready = await self.set_up()
            except Exception as error:  # noqa: BLE001  (reported to the coordinator, which fails the run)
                self.pipe.send({"error": f"set-up: {type(error).__name__}: {error}"})
                return
            self.pipe.send(ready)
            while True:
                try:
                    request = await loop.run_in_executor(None, self.pipe.recv)
                except EOFError:
                    return  # the coordinator is gone
                try:
                    answer = await self.handle(request)
                except Exception as error:  # noqa: BLE001  (reported to the coordinator, which fails the run)
                    self.pipe.send({"error": f"{request['do']}: {type(error).__name__}: {error}"})
                    return
                self.pipe.send(answer)
                if request["do"] == "close":
                    return
        finally:
            self.closing = True
            for task in self.readers:
                task.cancel()
            for ws in self.all_connections():
                ws.transport.abort()

    async def handle(self, request):
        if request["do"] == "publish":
            return await self.publish(request["seconds"], request["rate"])
        if request["do"] == "counts":
            return self.counts()
        if request["do"] == "storm":
            return await self.connect_storm()
        if request["do"] == "close":
            return await self.close_all()
        raise ValueError(f"unknown request {request}")

    def all_connections(self):
        return [p.ws for p in self.publishers] + self.subscribers + self.storm

    # Connecting

    def credentials(self, identity):
        """The token `identity` connects to the broker with (None for the baseline, which checks nothing)."""
        return token(identity, ttl=self.plan["token_ttl"]) if self.broker else None

    async def open(self, jwt, room, deadline_seconds):
        """A WebSocket to the target from this worker's source address: `/v1/ws` with `jwt` on the broker,
        `/ws/ROOM` on the baseline. On the broker, returns once the `welcome` is read."""
        loop = asyncio.get_running_loop()
        port = self.plan["port"]
        async with asyncio.timeout(deadline_seconds):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.SOL_IP, IP_BIND_ADDRESS_NO_PORT, 1)
                sock.bind((self.plan["source"], 0))
                sock.setblocking(False)
                await loop.sock_connect(sock, ("127.0.0.1", port))
            except BaseException:
                sock.close()
                raise
            if self.broker:
                uri = f"ws://127.0.0.1:{port}/v1/ws"
                headers = {"Authorization": f"Bearer {jwt}"}
            else:
                uri = f"ws://127.0.0.1:{port}/ws/{room}"
                headers = None
            ws = await connect(uri, sock=sock, additional_headers=headers, proxy=None, max_queue=None,
                               ping_interval=None, open_timeout=None, close_timeout=5)
            if self.broker:
                try:
                    welcome = await ws.recv()
                    if '"type":"welcome"' not in welcome:
                        raise RuntimeError(f"the broker's first frame was not a welcome: {welcome[:200]}")
                except BaseException:
                    ws.transport.abort()
                    raise
            return ws

    async def subscribe(self, ws, donation):
        """Subscribes a broker connection to `donation` and waits for `subscribed` with tracking on."""
        await ws.send('{"type":"subscribe","id":"s","donation":"%s"}' % donation)
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("type") == "subscribed":
                if frame.get("tracking") is not True:
                    raise RuntimeError(f"subscribed to {donation} but it is not trackable: {frame}")
                return
            if frame.get("type") == "error":
                raise RuntimeError(f"subscribe to {donation} refused: {frame}")

    async def set_up(self):
        """Opens this worker's publishers and subscribers (a bounded number at a time) and starts their readers."""
        plan = self.plan
        started = time.monotonic()
        gate = asyncio.Semaphore(plan["concurrency"])
        timeout = plan["open_timeout"]

        async def publisher(identity, room, channel):
            async with gate:
                ws = await self.open(self.credentials(identity), room, timeout)
            self.publishers.append(Publisher(ws, channel))
            self.readers.append(asyncio.create_task(self.read_publisher(ws)))

        async def subscriber(identity, room, donation):
            async with gate:
                ws = await self.open(self.credentials(identity), room, timeout)
                if self.broker:
                    try:
                        await asyncio.wait_for(self.subscribe(ws, donation), timeout)
                    except BaseException:
                        ws.transport.abort()
                        raise
            self.subscribers.append(ws)
            self.readers.append(asyncio.create_task(self.read_subscriber(ws)))

        jobs = []
        if plan["scenario"] == "fanout":
            volunteer, room = frames.fanout_volunteer()
            if plan["publisher"]:
                jobs.append(publisher(volunteer, room, volunteer))
            for i in range(*plan["subscribers"]):
                donor, donation = frames.fanout_watcher(i)
                jobs.append(subscriber(donor, room, donation))
        elif plan["scenario"] == "pairs":
            for i in range(*plan["pairs"]):
                volunteer, donor, donation, room = frames.pair(i)
                jobs.append(subscriber(donor, room, donation))
            for i in range(*plan["pairs"]):
                volunteer, donor, donation, room = frames.pair(i)
                jobs.append(publisher(volunteer, room, volunteer))
        else:
            # The storm's tokens are made now, so that minting them is not timed.
            first, end = plan["storm"]
            self.storm_plan = [(self.credentials(frames.storm_identity(i)), f"storm-{i}") for i in range(first, end)]
        results = await asyncio.gather(*jobs, return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if plan["scenario"] == "pairs":
            # Round-robin over the pairs in pair order, whatever order their connections opened in.
            self.publishers.sort(key=lambda p: int(p.channel[3:].split("@")[0]))
        return {"ready": len(jobs) - len(failures), "failed": len(failures),
                "first_failure": repr(failures[0]) if failures else None,
                "seconds": round(time.monotonic() - started, 3), "pid": os.getpid()}

    # Reading

    async def read_subscriber(self, ws):
        try:
            async for message in ws:
                if frames.is_position(message):
                    self.received += 1
                    if self.delivered_bytes is None:
                        self.delivered_bytes = len(message.encode())
                else:
                    kind = self.frame_type(message)
                    self.other_frames[kind] = self.other_frames.get(kind, 0) + 1
        except websockets.ConnectionClosed:
            pass
        if not self.closing:
            self.closed_early += 1

    async def read_publisher(self, ws):
        """Counts what a publisher is sent back: on the broker, only refusals (its publishes carry no id)."""
        try:
            async for message in ws:
                kind = self.frame_type(message)
                if kind == "error":
                    code = json.loads(message).get("code", "?")
                    self.refusals[code] = self.refusals.get(code, 0) + 1
                else:
                    self.other_frames[kind] = self.other_frames.get(kind, 0) + 1
        except websockets.ConnectionClosed:
            pass
        if not self.closing:
            self.closed_early += 1

    @staticmethod
    def frame_type(message):
        try:
            return str(json.loads(message).get("type", "?"))
        except (ValueError, AttributeError):
            return "unreadable"

    def counts(self):
        return {"published": self.published, "received": self.received, "refused": sum(self.refusals.values()),
                "refusals": dict(self.refusals), "other_frames": dict(self.other_frames), "closed_early": self.closed_early,
                "sent_bytes": self.sent_bytes, "delivered_bytes": self.delivered_bytes, "cpu_seconds": time.process_time()}

    # Publishing

    async def publish(self, seconds, rate):
        """Sends `rate` positions a second in all, round-robin over this worker's publishers, for `seconds`."""
        publishers = self.publishers
        started = time.perf_counter()
        cpu_before = time.process_time()
        sent = 0
        if publishers and rate > 0:
            end = started + seconds
            while True:
                now = time.perf_counter()
                if now >= end:
                    break
                due = int((now - started) * rate) + 1
                stamp = int(time.time() * 1000)
                batch = 0
                while sent < due and batch < BATCH:
                    publisher = publishers[sent % len(publishers)]
                    if self.broker:
                        message = frames.publish_frame(publisher.sent, stamp)
                    else:
                        message = frames.position_frame(publisher.channel, publisher.sent, stamp)
                    if self.sent_bytes is None:
                        self.sent_bytes = len(message)
                    await publisher.ws.send(message)
                    publisher.sent += 1
                    sent += 1
                    self.published += 1
                    batch += 1
                # Not less than a millisecond: the loop's timers are no finer, and a shorter sleep spins. A late
                # wake-up only makes the next batch larger.
                wait = started + sent / rate - time.perf_counter()
                await asyncio.sleep(max(0.001, min(wait, end - time.perf_counter())))
        elapsed = time.perf_counter() - started
        return {"sent": sent, "seconds": round(elapsed, 3), "cpu_seconds": round(time.process_time() - cpu_before, 3)}

    # The connect storm

    async def connect_storm(self):
        """Opens every planned storm connection, `concurrency` at a time, each one ready when its first frame (the
        broker's welcome) is read or, on the baseline, once upgraded; keeps them open."""
        gate = asyncio.Semaphore(self.plan["concurrency"])
        timeout = self.plan["open_timeout"]
        handshakes = []
        failures = []

        async def one(jwt, room):
            async with gate:
                began = time.monotonic()
                try:
                    ws = await self.open(jwt, room, timeout)
                except Exception as error:  # noqa: BLE001  (every failure is counted and the first reported)
                    failures.append(error)
                    return
                handshakes.append(time.monotonic() - began)
                self.storm.append(ws)

        cpu_before = time.process_time()
        started = time.monotonic()
        await asyncio.gather(*(one(jwt, room) for jwt, room in self.storm_plan))
        ended = time.monotonic()
        return {"connected": len(self.storm), "failed": len(failures), "first_failure": repr(failures[0]) if failures else None,
                "started": started, "ended": ended, "cpu_seconds": round(time.process_time() - cpu_before, 3),
                "handshake_ms": {"p50": round((percentile(handshakes, 50) or 0) * 1000, 3),
                                 "p99": round((percentile(handshakes, 99) or 0) * 1000, 3),
                                 "max": round(max(handshakes, default=0) * 1000, 3)}}

    async def close_all(self):
        """Closes every connection with the WebSocket closing handshake, 256 at a time."""
        self.closing = True
        started = time.monotonic()
        gate = asyncio.Semaphore(256)

        async def one(ws):
            async with gate:
                try:
                    await ws.close()
                except Exception:  # noqa: BLE001  (a connection that fails to close cleanly is aborted below)
                    ws.transport.abort()

        connections = self.all_connections()
        await asyncio.gather(*(one(ws) for ws in connections))
        return {"closed": len(connections), "seconds": round(time.monotonic() - started, 3)}
