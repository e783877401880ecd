#!/usr/bin/env python3
"""The tracking page's "Notify me" (Web Push) in headless Chromium, against a live broker.

Run by scripts/browser-test after tracking_page_test.py, with its Broker and Browser. What headless Chromium can and
cannot show (seen with Chromium 156, --headless=new):
- it has service workers, PushManager and Notification, and 127.0.0.1 is a secure context: the page offers the box;
- Notification.requestPermission() answers "denied" at once, with no prompt, unless the test grants the permission
  (Browser.grantPermissions); then it answers "granted";
- the worker registers and activates at /track/push-worker.js with the donation page's scope, under the page's CSP;
- pushManager.subscribe() never settles (no push service: it neither resolves nor rejects, not even with AbortError),
  so the page gives up after PUSH_STEP_TIMEOUT_MS and says so; a real subscription cannot be made here;
- with PushManager.prototype.subscribe replaced in the test's page only (Page.addScriptToEvaluateOnNewDocument) by
  one returning a subscription-shaped object, the page's POST and DELETE to the broker can be checked;
- the worker's push handler runs on ServiceWorker.deliverPushMessage (the DevTools way to push without a push
  service) and its notifications can be read back with registration.getNotifications(); a notification cannot be
  clicked from the DevTools Protocol, so `notificationclick` is not exercised here.

--push-routes stand-in (until the broker serves GET /v1/push/key and /v1/push/subscriptions): the browser's
Fetch domain answers those two paths for the page, as docs/PROTOCOL.md 12.3 says the broker does, and records what
the page sent; everything else (the page, the worker, the WebSocket) is the real broker's.
--push-routes broker: the broker answers them itself (started with push_subject and push_service_hosts 127.0.0.1:9).

Checks: the box stays hidden when /v1/push/key answers 404, and outside a secure context (http://insecure.test,
mapped to 127.0.0.1), and the page tracks as before; shown when it answers a
key; a refused permission is said in words and sends nothing; with the permission, the worker is registered and a
push service that never answers is reported; with a subscription, the page POSTs it with the watch token as a
Bearer header and says notifications are on, a push shows a notification whose click target is /track/d-1 without a
token, "Stop notifications" DELETEs it; a broker's refusal is shown with its message and the subscription dropped;
after DELIVERED the box is gone; no script error and no CSP violation.
Usage: push_button_test.py --broker PATH [--chromium PATH] [--push-routes stand-in|broker]
"""

import argparse
import asyncio
import base64
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracking_page_test import DONATION, HOST, Broker, Browser, CheckFailed, log  # noqa: E402

# RFC 8291 Appendix A's user agent key and auth secret: a real P-256 point, so a broker that checks keys accepts it.
P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
AUTH = "BTBZMqHH6r4Tts7J_aSIgg"
# The key the stand-in routes publish (any P-256 point will do: nothing is signed with it here).
# A name for the broker that is not a secure context (not localhost, not 127.0.0.1, not https).
INSECURE_HOST = "insecure.test"
STAND_IN_KEY = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
WAIT_SECONDS = 20
# The page's PUSH_STEP_TIMEOUT_MS, and some.
SUBSCRIBE_GIVE_UP_SECONDS = 30

# Replaces PushManager's subscribe and getSubscription in the test's page only: headless Chromium has no push service.
STUB = """
(() => {
  const made = { calls: [], unsubscribed: 0, current: null };
  window.__push = made;
  PushManager.prototype.subscribe = async function (options) {
    const key = options.applicationServerKey instanceof ArrayBuffer ? new Uint8Array(options.applicationServerKey)
      : new Uint8Array(options.applicationServerKey.buffer || options.applicationServerKey);
    made.calls.push({ userVisibleOnly: options.userVisibleOnly,
      key: btoa(String.fromCharCode(...key)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '') });
    const subscription = {
      endpoint: ENDPOINT, expirationTime: null,
      toJSON() { return { endpoint: this.endpoint, expirationTime: null, keys: { p256dh: P256DH, auth: AUTH } }; },
      async unsubscribe() { made.unsubscribed += 1; made.current = null; return true; },
    };
    made.current = subscription;
    return subscription;
  };
  PushManager.prototype.getSubscription = async function () { return made.current; };
})();
"""


class PushBrowser(Browser):
    """The test's Chromium, which can answer the page's /v1/push/ requests itself (the stand-in routes)."""

    def __init__(self, binary, workdir):
        super().__init__(binary, workdir)
        self.routes = None          # {"key": (status, body), "post": (status, body), "delete": (status, body)}
        self.push_requests = []     # what the page sent: {"method", "path", "authorization", "body"}
        self.registrations = []     # service worker registrations, as DevTools reports them

    def observe(self, message):
        if message.get("method") == "Fetch.requestPaused":
            asyncio.get_running_loop().create_task(self.answer(message["params"]))
            return
        if message.get("method") == "ServiceWorker.workerRegistrationUpdated":
            known = {r["registrationId"]: r for r in self.registrations}
            known.update({r["registrationId"]: r for r in message["params"].get("registrations", [])})
            self.registrations = list(known.values())
            return
        super().observe(message)

    async def answer(self, paused):
        request = paused["request"]
        path = "/" + request["url"].split("/", 3)[3]
        headers = {name.lower(): value for name, value in request.get("headers", {}).items()}
        self.push_requests.append({"method": request["method"], "path": path, "authorization": headers.get("authorization"),
                                   "body": json.loads(request["postData"]) if request.get("postData") else None})
        if path == "/v1/push/key" and request["method"] == "GET":
            status, body = self.routes["key"]
        elif path == "/v1/push/subscriptions" and request["method"] in ("POST", "DELETE"):
            status, body = self.routes["post" if request["method"] == "POST" else "delete"]
        else:
            status, body = 404, {"error": {"code": "not-found", "message": "no such route"}}
        data = json.dumps(body).encode() if body is not None else b""
        await self.call("Fetch.fulfillRequest", {
            "requestId": paused["requestId"], "responseCode": status,
            "responseHeaders": [{"name": "Content-Type", "value": "application/json"}],
            "body": base64.b64encode(data).decode()})

    async def stand_in(self, routes):
        self.routes = routes
        await self.call("Fetch.enable", {"patterns": [{"urlPattern": "*/v1/push/*", "requestStage": "Request"}]})

    async def evaluate(self, expression, awaited=False):
        result = await self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": awaited})
        if "exceptionDetails" in result:
            raise CheckFailed(f"{expression[:60]}... threw {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    async def push_box(self):
        return json.loads(await self.evaluate("""JSON.stringify((() => {
            const box = document.getElementById('push');
            const on = document.getElementById('push-on');
            const off = document.getElementById('push-off');
            const usable = (b) => !b.hidden && b.getAttribute('aria-disabled') !== 'true';
            return { shown: !box.hidden, on: usable(on), off: usable(off), focus: document.activeElement && document.activeElement.id,
                     status: document.getElementById('push-status').textContent,
                     live: document.getElementById('push-status').getAttribute('aria-live'),
                     connection: document.getElementById('connection').textContent, stub: window.__push || null,
                     events: [...document.querySelectorAll('#events li')].slice(-3).map((li) => li.textContent) };
        })())"""))

    async def click(self, element_id):
        """Focuses the button, then clicks it, as a keyboard user's Enter does."""
        await self.evaluate(f"(() => {{ const b = document.getElementById('{element_id}'); b.focus(); b.click(); }})()")

    async def registration(self):
        return json.loads(await self.evaluate("""navigator.serviceWorker.getRegistration('/track/' + location.pathname.split('/').pop())
            .then((r) => JSON.stringify(r ? { scope: r.scope, script: (r.active || r.installing || r.waiting || {}).scriptURL || null } : null))""",
                                              awaited=True))

    async def notifications(self):
        return json.loads(await self.evaluate("""navigator.serviceWorker.getRegistration(location.href)
            .then((r) => r ? r.getNotifications() : []).then((list) => JSON.stringify(list.map((n) =>
              ({ title: n.title, body: n.body, tag: n.tag, renotify: n.renotify, data: n.data }))))""", awaited=True))


async def wait_box(browser, what, predicate, seconds=WAIT_SECONDS):
    deadline = time.monotonic() + seconds
    seen = {}
    while time.monotonic() < deadline:
        try:
            seen = await browser.push_box()
        except CheckFailed as error:
            seen = {"error": str(error)}  # the document is being replaced: ask again
        if "error" not in seen and predicate(seen):
            log(f"ok: {what}  [status={seen['status']!r}]")
            return seen
        await asyncio.sleep(0.2)
    raise CheckFailed(f"not within {seconds} s: {what}\nthe box showed: {json.dumps(seen, ensure_ascii=False)}")


async def open_page(browser, broker, link, stub_endpoint=None):
    """Opens the watch link in a new document; with `stub_endpoint`, PushManager is replaced first."""
    if stub_endpoint:
        source = STUB.replace("ENDPOINT", json.dumps(stub_endpoint)).replace("P256DH", json.dumps(P256DH)).replace("AUTH", json.dumps(AUTH))
        added = await browser.call("Page.addScriptToEvaluateOnNewDocument", {"source": source})
    else:
        added = None
    # Through about:blank: from /track/d-1 the link (/track/d-1#token=...) would only change the fragment. The old
    # document carries a mark the new one lacks, so that nothing is read from the page being left.
    await browser.evaluate("window.__left = true")
    await browser.navigate("about:blank")
    await browser.navigate(f"http://{HOST}:{broker.port}{link['url']}")
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            if await browser.evaluate("window.__left !== true && location.protocol === 'http:' && document.readyState === 'complete'"):
                break
        except CheckFailed:
            pass  # the context changes under the call while the new document loads
        if time.monotonic() > deadline:
            raise CheckFailed(f"the page did not load within {WAIT_SECONDS} s")
        await asyncio.sleep(0.1)
    await wait_box(browser, "the page is live", lambda b: b["connection"] == "live" and b["status"] == "")
    if added:
        await browser.call("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})


async def run(options):
    workdir = tempfile.mkdtemp(prefix="push-button-test-")
    broker = Broker(options.broker, workdir, tiles=False)
    stand_in = options.push_routes == "stand-in"
    if not stand_in:
        broker.env["LOCATION_BROKER_PUSH_SUBJECT"] = "mailto:ops@example.org"
        # The stub endpoint is on port 9 of this machine, allowed by name (push_service_hosts takes host:port).
        broker.env["LOCATION_BROKER_PUSH_SERVICE_HOSTS"] = f"{HOST}:9"
    browser = PushBrowser(options.chromium, workdir)
    browser.arguments.append(f"--host-resolver-rules=MAP {INSECURE_HOST} {HOST}")
    # The test opens the page afresh for each scenario; Chromium's back/forward cache would keep each page it left
    # alive, with its WebSocket, and the fifth would pass max_connections_per_identity (4).
    browser.arguments.append("--disable-features=BackForwardCache")
    try:
        port = broker.start()
        origin = f"http://{HOST}:{port}"
        log(f"broker: listening on {origin}; /v1/push/ routes: {'stand-in (the browser answers)' if stand_in else 'the broker'}")
        broker.put_donation("CREATED")
        broker.put_donation("BEING-LOOKED-FOR")
        link = broker.watch_link()
        token = link["token"]
        await browser.start()
        key = STAND_IN_KEY
        if stand_in:
            await browser.stand_in({"key": (404, {"error": {"code": "push_disabled", "message": "push is off"}}),
                                    "post": (201, {"donation": DONATION}), "delete": (204, None)})
            # 1. The broker sends no pushes: no box, and the page tracks as before.
            await open_page(browser, broker, link)
            await asyncio.sleep(1.5)
            box = await browser.push_box()
            asked = [r for r in browser.push_requests if r["path"] == "/v1/push/key"]
            if not asked or box["shown"]:
                raise CheckFailed(f"with /v1/push/key answering 404 the page should ask once and show no box: asked {len(asked)}, {box}")
            log("ok: /v1/push/key answers 404: the box stays hidden and the page is live")
            browser.routes["key"] = (200, {"public_key": key})
            # 0. Not a secure context (plain http on a name): no service worker, so no box, and the key is not even asked.
            asked_before = len(browser.push_requests)
            await browser.evaluate("window.__left = true")
            await browser.navigate(f"http://{INSECURE_HOST}:{port}{link['url']}")
            await asyncio.sleep(1)
            await wait_box(browser, f"on http://{INSECURE_HOST} (not a secure context) the page is live", lambda b: b["connection"] == "live")
            await asyncio.sleep(1.5)
            box = await browser.push_box()
            if box["shown"] or len(browser.push_requests) != asked_before:
                raise CheckFailed(f"outside a secure context the page should neither ask for the key nor show the box: {box}")
            log("ok: outside a secure context the box stays hidden and the broker is not asked for its key")
        else:
            status, text = broker.request("GET", "/v1/push/key")
            if status != 200:
                raise CheckFailed(f"the broker started with push_subject should answer GET /v1/push/key, it answered {status}: {text}")
            key = json.loads(text)["public_key"]

        # 2. Offered; the permission refused (headless Chromium refuses when not granted): said, nothing sent.
        await open_page(browser, broker, link)
        await wait_box(browser, "the broker has a key: the box offers \u201cNotify me\u201d", lambda b: b["shown"] and b["on"] and not b["off"]
                       and b["live"] == "polite")
        sent_before = len(browser.push_requests)
        await browser.click("push-on")
        await wait_box(browser, "a refused permission is said in words", lambda b: b["status"].startswith("Notifications are blocked"))
        if any(r["path"] == "/v1/push/subscriptions" for r in browser.push_requests[sent_before:]):
            raise CheckFailed("the page sent a subscription without the permission")

        await browser.call("Browser.grantPermissions", {"origin": origin, "permissions": ["notifications"]}, browser=True)
        # 3. The permission granted, the real PushManager: the worker registers, the push service never answers.
        await open_page(browser, broker, link)
        await wait_box(browser, "with the permission the box offers \u201cNotify me\u201d", lambda b: b["shown"] and b["on"])
        await browser.click("push-on")
        seen = await wait_box(browser, "headless Chromium's subscribe() never settles: the page gives up and says so",
                              lambda b: b["status"].startswith("Notifications could not be turned on") and b["on"],
                              seconds=SUBSCRIBE_GIVE_UP_SECONDS)
        log(f"   (the page said: {seen['status']!r})")
        registration = await browser.registration()
        if not registration or registration["scope"] != f"{origin}/track/{DONATION}" or registration["script"] != f"{origin}/track/push-worker.js":
            raise CheckFailed(f"the worker should be registered at /track/push-worker.js with the donation page's scope: {registration}")
        log(f"ok: the worker is registered: {registration['script']} for {registration['scope']}")

        # 4. A subscription (stubbed PushManager): POST with the watch token, on; a push shows; Stop DELETEs it.
        endpoint = f"http://{HOST}:9/push/test-subscription"
        await open_page(browser, broker, link, stub_endpoint=endpoint)
        await wait_box(browser, "the box offers \u201cNotify me\u201d again", lambda b: b["shown"] and b["on"])
        sent_before = len(browser.push_requests)
        await browser.click("push-on")
        box = await wait_box(browser, "the broker took the subscription: notifications are on, \u201cStop notifications\u201d offered",
                             lambda b: b["status"].startswith("Notifications are on") and b["off"] and not b["on"]
                             and b["focus"] == "push-off")
        calls = box["stub"]["calls"]
        if calls != [{"userVisibleOnly": True, "key": key}]:
            raise CheckFailed(f"subscribe() should be called once, userVisibleOnly, with the broker's key: {calls}")
        if stand_in:
            posts = [r for r in browser.push_requests[sent_before:] if r["method"] == "POST"]
            expected = {"endpoint": endpoint, "expirationTime": None, "keys": {"p256dh": P256DH, "auth": AUTH}}
            if len(posts) != 1 or posts[0]["authorization"] != f"Bearer {token}" or posts[0]["body"] != expected:
                raise CheckFailed(f"one POST /v1/push/subscriptions with the watch token and the subscription's JSON expected: {posts}")
            log("ok: the page POSTed the subscription's JSON with Authorization: Bearer <the watch token>")
        # The registration's id, as DevTools knows it, to push to it.
        await browser.call("ServiceWorker.enable")
        scope = f"{origin}/track/{DONATION}"
        message = {"title": "Almost there", "body": "The volunteer is about 4 minutes away.", "tag": f"donation-{DONATION}",
                   "donation": DONATION, "type": "tracking.approaching"}
        shown = await push_and_wait(browser, origin, scope, json.dumps(message), lambda n: any(x["title"] == "Almost there" for x in n))
        note = next(x for x in shown if x["title"] == "Almost there")
        if (note["body"], note["tag"], note["renotify"], note["data"]) != (message["body"], message["tag"], True, {"url": f"{origin}/track/{DONATION}"}):
            raise CheckFailed(f"the notification should say the push's words, replace the last by tag, and open /track/{DONATION}: {note}")
        log(f"ok: a push shows a notification with its words and tag; its click opens /track/{DONATION}, no token")
        foreign = dict(message, title="Elsewhere", url="https://evil.example/track/d-1")
        shown = await push_and_wait(browser, origin, scope, json.dumps(foreign), lambda n: any(x["title"] == "Elsewhere" for x in n))
        if next(x for x in shown if x["title"] == "Elsewhere")["data"]["url"] != f"{origin}/track/{DONATION}":
            raise CheckFailed("a push's url on another origin must not become the click's target")
        await push_and_wait(browser, origin, scope, "not JSON", lambda n: any(x["title"] == "Your donation" for x in n))
        log("ok: a push naming another origin opens the donation's page; an unreadable push still shows a notification")

        sent_before = len(browser.push_requests)
        await browser.click("push-off")
        box = await wait_box(browser, "\u201cStop notifications\u201d turns them off; the focus goes back to \u201cNotify me\u201d",
                             lambda b: b["status"] == "Notifications are off." and b["on"] and b["focus"] == "push-on")
        if box["stub"]["unsubscribed"] != 1:
            raise CheckFailed(f"the browser's subscription should be dropped once: {box['stub']}")
        if stand_in:
            deletes = [r for r in browser.push_requests[sent_before:] if r["method"] == "DELETE"]
            if len(deletes) != 1 or deletes[0]["authorization"] != f"Bearer {token}" or deletes[0]["body"] != {"endpoint": endpoint}:
                raise CheckFailed(f"one DELETE /v1/push/subscriptions with the token and the endpoint expected: {deletes}")
            log("ok: the page DELETEd the subscription with the watch token")

        # 5. The broker refuses: its message is shown, the subscription dropped.
        refusal = "the push service's host is not one this broker sends to (push_service_hosts)"
        if stand_in:
            browser.routes["post"] = (403, {"error": {"code": "push_service_not_allowed", "message": refusal}})
            refused_endpoint = endpoint
        else:
            refused_endpoint = "https://push.example.net/push/test"
        await open_page(browser, broker, link, stub_endpoint=refused_endpoint)
        await wait_box(browser, "the box is offered", lambda b: b["shown"] and b["on"])
        await browser.click("push-on")
        box = await wait_box(browser, "the broker's refusal is shown in its words", lambda b:
                             b["status"].startswith("Notifications could not be turned on: ") and b["on"]
                             and (not stand_in or refusal in b["status"]))
        if box["stub"]["unsubscribed"] != 1:
            raise CheckFailed(f"a subscription the broker refused should be dropped: {box['stub']}")

        # 6. After the end of tracking there is nothing to notify: the box goes.
        for state in ("PICKED-BY-VOLUNTEER", "BEING-TAKEN-TO", "DELIVERED"):
            broker.put_donation(state)
        await wait_box(browser, "after DELIVERED the box is gone", lambda b: not b["shown"] and b["connection"] == "ended")

        if browser.problems:
            raise CheckFailed("the page reported problems:\n  " + "\n  ".join(browser.problems))
        log("ok: no script errors and no policy violations")
        return 0
    except CheckFailed as failure:
        log(f"FAIL: {failure}")
        log("broker log (end):\n" + broker.tail())
        if browser.problems:
            log("page problems:\n  " + "\n  ".join(browser.problems))
        return 1
    finally:
        await browser.stop()
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)


async def registration_id(browser, scope):
    """DevTools' id of the newest registration for `scope` (ServiceWorker.workerRegistrationUpdated tells it): an
    earlier scenario's registration may not be reported deleted yet, and a push sent to it shows nothing."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        for registration in reversed(browser.registrations):
            if registration["scopeURL"] == scope and not registration.get("isDeleted"):
                return registration["registrationId"]
        await asyncio.sleep(0.1)
    raise CheckFailed(f"DevTools did not report a registration for {scope}: {browser.registrations}")


async def push_and_wait(browser, origin, scope, data, predicate, tries=3):
    """Pushes `data` to the newest registration for `scope` and waits for a notification that passes `predicate`. A
    registration DevTools has not yet reported replaced may take a push and show nothing: the push is then sent
    again to the newest one, at most `tries` times in all."""
    for attempt in range(tries):
        push_id = await registration_id(browser, scope)
        await browser.call("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": push_id, "data": data})
        try:
            return await wait_notifications(browser, predicate, seconds=WAIT_SECONDS if attempt == tries - 1 else 5)
        except CheckFailed:
            if attempt == tries - 1:
                raise
            log(f"   (no notification from registration {push_id} yet: pushing again to the newest one)")


async def wait_notifications(browser, predicate, seconds=None):
    seconds = WAIT_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + seconds
    shown = []
    while time.monotonic() < deadline:
        shown = await browser.notifications()
        if predicate(shown):
            return shown
        await asyncio.sleep(0.2)
    raise CheckFailed(f"not within {seconds} s: the notification; shown: {shown}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--broker", required=True, help="the location-broker binary")
    parser.add_argument("--chromium", default="chromium", help="the Chromium binary")
    parser.add_argument("--push-routes", choices=["stand-in", "broker"], default="stand-in",
                        help="who answers /v1/push/key and /v1/push/subscriptions")
    options = parser.parse_args()
    options.broker = os.path.abspath(options.broker)  # the broker runs in its work directory
    sys.exit(asyncio.run(run(options)))


if __name__ == "__main__":
    main()
