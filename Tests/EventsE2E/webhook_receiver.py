#!/usr/bin/env python3
"""A webhook receiver for the broker's events, as an operator's backend would run one, that checks everything.

Every POST (to any path but /control/...) is verified with the Standard Webhooks library itself
(`standardwebhooks.Webhook(secret).verify(body, headers)`, any of the configured secrets), then:
- refused with 401 and recorded as a failure when the signature, the timestamp or a header is wrong;
- answered 500 (and counted, not recorded) while the receiver is told to fail: for N seconds after
  `POST /control/fail {"seconds": N}`, or while the file given by --fail-file exists;
- recorded once per `webhook-id` (a redelivery is answered 200 and counted as a duplicate);
- checked for the contract's shape (`evt_` + 32 hex id, `type`, `timestamp`, `data.donation`) and for anything that
  may leak a place or a person (privacy.py): each problem is recorded as a failure, the delivery still answered 200.

Records go to memory and, with --record FILE, to a JSON lines file: `{"kind": "event", ...}` or
`{"kind": "failure", ...}`. Control (for a test in another process): `GET /control/events`, `GET /control/failures`,
`GET /control/stats`, `POST /control/fail`.

Usage: webhook_receiver.py --secret whsec_... [--secret whsec_...] [--port 0] [--record events.jsonl] [--fail-file F]
It prints `listening on http://127.0.0.1:PORT` once ready.
"""

import argparse
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import standardwebhooks

import privacy

HOST = "127.0.0.1"
EVENT_ID = re.compile(r"^evt_[0-9a-f]{32}$")
MAX_BODY = 64 * 1024


class WebhookReceiver:
    """The receiver; `start()` serves it on a thread (port 0: a free one), `stop()` ends it."""

    def __init__(self, secrets, port=0, record_path=None, fail_file=None, forbidden_strings=()):
        if not secrets:
            raise ValueError("a webhook receiver needs at least one whsec_ secret")
        self.hooks = [standardwebhooks.Webhook(secret) for secret in secrets]
        self.record_path = record_path
        self.fail_file = fail_file
        self.forbidden_strings = tuple(forbidden_strings)
        self.lock = threading.Lock()
        self.events = []          # in arrival order, one per webhook-id
        self.failures = []
        self.seen = set()
        self.duplicates = 0
        self.refused_while_failing = 0
        self.requests = 0
        self.fail_until = 0.0
        self.http = ThreadingHTTPServer((HOST, port), self._handler())
        self.port = self.http.server_address[1]
        self.thread = None

    @property
    def url(self):
        return f"http://{HOST}:{self.port}"

    def start(self):
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.http.shutdown()
        self.http.server_close()

    def fail_for(self, seconds):
        """Answer 500 to every delivery for `seconds` from now (0: stop failing)."""
        with self.lock:
            self.fail_until = time.monotonic() + max(0.0, float(seconds))

    def failing(self):
        if self.fail_file and os.path.exists(self.fail_file):
            return True
        return time.monotonic() < self.fail_until

    def snapshot(self):
        with self.lock:
            return {
                "events": list(self.events), "failures": list(self.failures), "duplicates": self.duplicates,
                "refused_while_failing": self.refused_while_failing, "requests": self.requests,
            }

    def _record(self, kind, entry):
        entry = dict(entry, kind=kind, received_at=time.time())
        (self.events if kind == "event" else self.failures).append(entry)
        if self.record_path:
            with open(self.record_path, "a", encoding="utf-8") as output:
                output.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def receive(self, body, headers):
        """Handles one delivery; returns the HTTP status to answer."""
        with self.lock:
            self.requests += 1
            if self.failing():
                self.refused_while_failing += 1
                return 500
            message_id = headers.get("webhook-id", "")
            payload = None
            errors = []
            for hook in self.hooks:
                try:
                    payload = hook.verify(body, headers)
                    break
                except Exception as error:  # the library's WebhookVerificationError, or a malformed header
                    errors.append(f"{type(error).__name__}: {error}")
            if payload is None:
                self._record("failure", {"id": message_id, "reason": "not verified: " + "; ".join(errors),
                                         "body": body.decode("utf-8", errors="replace")[:500]})
                return 401
            if message_id in self.seen:
                self.duplicates += 1
                return 200
            self.seen.add(message_id)
            problems = self.shape_problems(message_id, payload)
            problems += privacy.problems(body, self.forbidden_strings)
            # The headers must not leak either (a URL with a query, a name in a custom header).
            problems += [f"header: {p}" for p in privacy.problems(json.dumps(headers), self.forbidden_strings)]
            for problem in problems:
                self._record("failure", {"id": message_id, "reason": problem, "body": body.decode("utf-8", errors="replace")})
            self._record("event", {"id": message_id, "timestamp_header": headers.get("webhook-timestamp"),
                                   "type": payload.get("type") if isinstance(payload, dict) else None,
                                   "payload": payload})
            return 200

    @staticmethod
    def shape_problems(message_id, payload):
        found = []
        if not EVENT_ID.match(message_id):
            found.append(f"webhook-id {message_id!r} is not evt_ and 32 lowercase hex digits")
        if not isinstance(payload, dict):
            return found + ["the body is not a JSON object"]
        if not isinstance(payload.get("type"), str) or not payload["type"].startswith("tracking."):
            found.append(f"type {payload.get('type')!r} is not a tracking.* event")
        if not isinstance(payload.get("timestamp"), str) or not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", payload["timestamp"]):
            found.append(f"timestamp {payload.get('timestamp')!r} is not an ISO 8601 UTC time")
        data = payload.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("donation"), str) or not data["donation"]:
            found.append("data.donation is missing")
        return found

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, status, body=None):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self):
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(min(length, MAX_BODY + 1))

            def do_GET(self):
                snapshot = receiver.snapshot()
                if self.path == "/control/events":
                    self._answer(200, snapshot["events"])
                elif self.path == "/control/failures":
                    self._answer(200, snapshot["failures"])
                elif self.path == "/control/stats":
                    self._answer(200, {k: v for k, v in snapshot.items() if k not in ("events", "failures")})
                else:
                    self._answer(404, {"error": "GET serves /control/events, /control/failures, /control/stats"})

            def do_POST(self):
                body = self._body()
                if self.path == "/control/fail":
                    try:
                        receiver.fail_for(json.loads(body or b"{}").get("seconds", 0))
                    except (ValueError, AttributeError):
                        self._answer(400, {"error": 'send {"seconds": N}'})
                        return
                    self._answer(200, {"failing": True})
                    return
                if len(body) > MAX_BODY:
                    self._answer(413, {"error": "body too large"})
                    return
                headers = {name.lower(): value for name, value in self.headers.items()}
                self._answer(receiver.receive(body, headers))

            def log_message(self, *args):
                pass

        return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--secret", action="append", required=True, help="a whsec_ secret (repeat for rotation)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", help="JSON lines file of events and failures")
    parser.add_argument("--fail-file", help="answer 500 while this file exists")
    parser.add_argument("--forbid", action="append", default=[], help="a text no payload may hold (repeatable)")
    options = parser.parse_args()
    receiver = WebhookReceiver(options.secret, options.port, options.record, options.fail_file, options.forbid).start()
    print(f"listening on {receiver.url}", flush=True)
    try:
        receiver.thread.join()
    except KeyboardInterrupt:
        receiver.stop()


if __name__ == "__main__":
    main()
