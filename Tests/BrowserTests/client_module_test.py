#!/usr/bin/env python3
"""The JavaScript client (clients/javascript/location-broker-client.js) in a real browser against a live broker.

Run by scripts/browser-test after tracking_page_test.py, with the same broker binary and Chromium. It starts
location-broker with `heartbeat_seconds: 1`, puts a TCP proxy it controls between the browser and the broker, opens
a page of the broker's origin in headless Chromium, imports the module the broker serves at
/assets/location-broker-client.js and watches a donation with its DonationWatcher, while a volunteer publishes
(over Python's websockets, and once with the module's own VolunteerPublisher). It checks that positions arrive once
each and in seq order; that a pause, quiet for several heartbeats, is not taken for a dead path; that tracking
resumes; that a path gone silent (the proxy stops forwarding, no FIN, no RST) is left within two heartbeats and
the positions published meanwhile come back through `since`, none twice; and that the watcher ends on DELIVERED.
Every wait is bounded; it exits 1 on the first failed check and prints what the watcher reported.
"""

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracking_page_test import (  # noqa: E402  (the shared broker, volunteer and browser drivers)
    DONOR, HOST, HOME, INSTITUTION, VOLUNTEER, Broker, Browser, CheckFailed, Volunteer, destination, log)

HEARTBEAT_SECONDS = 1
WAIT_SECONDS = 20


class SilencingProxy:
    """A TCP proxy to the broker whose open connections can be made to go silent: bytes are read and dropped both
    ways, nothing is closed. Connections made after that are forwarded normally."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.server = None
        self.port = 0
        self.connections = []
        self.tasks = set()

    async def start(self):
        self.server = await asyncio.start_server(self.accept, HOST, 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    async def accept(self, client_reader, client_writer):
        try:
            broker_reader, broker_writer = await asyncio.open_connection(HOST, self.target_port)
        except OSError:
            client_writer.close()
            return
        state = {"silent": False, "writers": (client_writer, broker_writer)}
        self.connections.append(state)
        for reader, writer in ((client_reader, broker_writer), (broker_reader, client_writer)):
            task = asyncio.create_task(self.pump(reader, writer, state))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def pump(self, reader, writer, state):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if not state["silent"]:
                    writer.write(data)
                    await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            if not state["silent"]:
                writer.close()

    def silence(self):
        """Every connection open now stops forwarding, without a FIN or an RST."""
        for state in self.connections:
            state["silent"] = True
        self.connections = []

    async def stop(self):
        if self.server:
            self.server.close()
            await self.server.wait_closed()
        for task in list(self.tasks):
            task.cancel()
        for task in list(self.tasks):
            try:
                await task
            except BaseException:
                pass


class ModulePage:
    """The module in the browser: a DonationWatcher whose events the test reads back."""

    def __init__(self, browser):
        self.browser = browser

    async def evaluate(self, expression, await_promise=False):
        result = await self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                              "awaitPromise": await_promise})
        if "exceptionDetails" in result:
            raise CheckFailed("the page threw: " + json.dumps(result["exceptionDetails"].get("exception", {}).get("description")
                                                               or result["exceptionDetails"].get("text")))
        return result.get("result", {}).get("value")

    async def watch(self, url, token):
        await self.evaluate("""(async () => {
            const { DonationWatcher } = await import('/assets/location-broker-client.js');
            window.__events = [];
            const watcher = new DonationWatcher({ url: %s, donation: 'd-1', token: async () => %s });
            for (const type of ['connection', 'subscribed', 'waiting', 'position', 'paused', 'resumed', 'state', 'presence',
                                'arrival', 'stale', 'fresh', 'not-trackable', 'ended']) {
              watcher.on(type, (detail) => window.__events.push({ type, detail, at: Date.now() }));
            }
            window.__watcher = watcher;
            watcher.start();
            return true;
        })()""" % (json.dumps(url), json.dumps(token)), await_promise=True)

    async def events(self):
        return json.loads(await self.evaluate("JSON.stringify(window.__events)"))

    async def wait_for(self, what, predicate, seconds=WAIT_SECONDS):
        deadline = time.monotonic() + seconds
        events = []
        while time.monotonic() < deadline:
            events = await self.events()
            if predicate(events):
                log(f"ok: {what}")
                return events
            await asyncio.sleep(0.1)
        raise CheckFailed(f"not within {seconds} s: {what}\nthe watcher reported:\n" + "\n".join(json.dumps(e) for e in events))


def of(events, kind):
    return [event["detail"] for event in events if event["type"] == kind]


def seqs(events):
    return [detail["seq"] for detail in of(events, "position")]


def check_once_in_order(events):
    seen = seqs(events)
    if seen != sorted(set(seen)):
        raise CheckFailed(f"positions came twice or out of order: seqs {seen}")


async def run(options):
    workdir = tempfile.mkdtemp(prefix="client-module-test-")
    broker = Broker(os.path.abspath(options.broker), workdir, tiles=False)
    broker.env["LOCATION_BROKER_HEARTBEAT_SECONDS"] = str(HEARTBEAT_SECONDS)
    browser = Browser(options.chromium, workdir)
    proxy = None
    volunteer = None
    try:
        port = broker.start()
        log(f"broker: listening on {HOST}:{port}, heartbeat {HEARTBEAT_SECONDS} s")
        proxy = SilencingProxy(port)
        proxy_port = await proxy.start()
        broker.put_donation("CREATED")
        broker.put_donation("BEING-LOOKED-FOR")
        volunteer = Volunteer(broker, broker.token(VOLUNTEER))
        await volunteer.connect()

        await browser.start()
        # A page of the broker's origin, so that the module is imported as the tracking page imports it.
        await browser.navigate(f"http://{HOST}:{port}/healthz")
        await asyncio.sleep(0.5)
        page = ModulePage(browser)
        await page.watch(f"ws://{HOST}:{proxy_port}/v1/ws", broker.token(DONOR))
        await page.wait_for("the watcher subscribes to the donation", lambda e:
                            any(d["kind"] == "connected" for d in of(e, "connection")) and len(of(e, "subscribed")) == 1
                            and len(of(e, "waiting")) == 1)

        # Positions arrive, once each, in seq order.
        for metres in (2000, 1500, 1000):
            lat, lon = destination(HOME["lat"], HOME["lon"], 10, metres)
            await volunteer.publish(lat, lon)
        events = await page.wait_for("three positions arrive", lambda e: len(seqs(e)) == 3)
        check_once_in_order(events)

        # A pause is quiet (no positions, no presence) for several heartbeats: the watcher checks the path and stays.
        broker.put_donation("PICKED-BY-VOLUNTEER")
        await page.wait_for("the pause is reported", lambda e: of(e, "paused") == [{"state": "PICKED-BY-VOLUNTEER"}])
        await asyncio.sleep(4 * HEARTBEAT_SECONDS)
        events = await page.events()
        if any(d["kind"] == "reconnecting" for d in of(events, "connection")):
            raise CheckFailed("a quiet pause was taken for a dead path:\n" + json.dumps(of(events, "connection")))
        log(f"ok: {4 * HEARTBEAT_SECONDS} s of a quiet pause ({4 * HEARTBEAT_SECONDS} heartbeats) on one connection")
        broker.put_donation("BEING-TAKEN-TO")
        await page.wait_for("tracking resumes towards the institution", lambda e:
                            of(e, "resumed") == [{"state": "BEING-TAKEN-TO", "destination": "institution"}])

        # The module's own publisher, in the same browser: its fix is acknowledged and reaches the watcher.
        published_lat, published_lon = destination(INSTITUTION["lat"], INSTITUTION["lon"], 120, 1500)
        published = await page.evaluate("""(async () => {
            const { VolunteerPublisher } = await import('/assets/location-broker-client.js');
            const publisher = new VolunteerPublisher({ url: %s, token: () => %s });
            const outcome = new Promise((resolve) => publisher.on('fix', resolve));
            publisher.start();
            publisher.publish({ lat: %f, lon: %f, accuracy: 5, speed: 7, heading: 300, timestamp: Date.now() });
            const fix = await Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve(null), 10000))]);
            publisher.close();
            return JSON.stringify(fix);
        })()""" % (json.dumps(f"ws://{HOST}:{port}/v1/ws"), json.dumps(volunteer.token),
                   published_lat, published_lon), await_promise=True)
        fix = json.loads(published or "null")
        if not fix or fix.get("result") != "accepted" or not fix["audience"]["tracking"] or fix["audience"]["watchers"] < 1:
            raise CheckFailed(f"the module's publisher got {fix} instead of an accepted fix that a watcher receives")
        log(f"ok: the module's VolunteerPublisher got its ack (seq {fix['seq']}, {fix['audience']['watchers']} watcher)")
        # The watcher numbers positions in the donor's view, not the volunteer's ack: the fix is known by its place.
        await page.wait_for("the publisher's fix reaches the watcher", lambda e: any(
            abs(d["position"]["lat"] - published_lat) < 1e-6 for d in of(e, "position")))

        # The path goes silent (no FIN, no RST): left within two heartbeats, and what was published meanwhile comes back.
        before = seqs(await page.events())
        proxy.silence()
        silenced = time.monotonic()
        log("proxy: the watcher's path is silent from now on")
        for metres in (1200, 1000):
            lat, lon = destination(INSTITUTION["lat"], INSTITUTION["lon"], 120, metres)
            await volunteer.publish(lat, lon)
        events = await page.wait_for("the watcher leaves the silent path and subscribes again with since", lambda e:
                                     any(d["kind"] == "reconnected" for d in of(e, "connection")), seconds=10)
        left = time.monotonic() - silenced
        lost = [d for d in of(events, "connection") if d["kind"] == "reconnecting"]
        reconnected = [d for d in of(events, "connection") if d["kind"] == "reconnected"]
        if reconnected[0]["since"] != before[-1]:
            raise CheckFailed(f"subscribed again with since {reconnected[0]['since']}, not the last seq seen {before[-1]}")
        log(f"ok: reconnected {left:.1f} s after the path went silent ({lost[0]['reason']}), since {reconnected[0]['since']}")
        if left > 2 * HEARTBEAT_SECONDS + 3:
            raise CheckFailed(f"the silent path was left only after {left:.1f} s (two heartbeats: {2 * HEARTBEAT_SECONDS} s)")
        events = await page.wait_for("the two positions published on the silent path arrive", lambda e: len(seqs(e)) == len(before) + 2)
        check_once_in_order(events)

        # Delivered: the watcher ends.
        broker.put_donation("DELIVERED")
        events = await page.wait_for("the watcher ends on DELIVERED", lambda e: of(e, "ended") == [{"kind": "unsubscribed", "reason": "DELIVERED"}])
        check_once_in_order(events)
        log(f"ok: {len(seqs(events))} positions, each once and in seq order: {seqs(events)}")
        if browser.problems:
            raise CheckFailed("the page reported problems:\n  " + "\n  ".join(browser.problems))
        log("ok: no script errors")
        return 0
    except CheckFailed as failure:
        log(f"FAIL: {failure}")
        log("broker log (end):\n" + broker.tail())
        if browser.problems:
            log("page problems:\n  " + "\n  ".join(browser.problems))
        return 1
    finally:
        if volunteer:
            await volunteer.close()
        await browser.stop()
        if proxy:
            await proxy.stop()
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--broker", required=True, help="the location-broker binary")
    parser.add_argument("--chromium", default="chromium", help="the Chromium binary")
    options = parser.parse_args()
    sys.exit(asyncio.run(run(options)))


if __name__ == "__main__":
    main()
