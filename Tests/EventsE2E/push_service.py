#!/usr/bin/env python3
"""A Web Push service stand-in (what FCM, Mozilla's autopush or Apple's service do), that checks everything.

It makes subscriptions as a browser would (a P-256 key pair and a 16-byte auth secret; `new_subscription()` or
`POST /control/subscriptions` gives `{"endpoint", "expirationTime": null, "keys": {"p256dh", "auth"}}` to POST to the
broker), and accepts `POST /push/<subscription id>` only when:
- `Authorization: vapid t=<JWT>, k=<key>` (RFC 8292): `k` is the key the broker publishes (GET /v1/push/key) when one
  was given, the JWT's ES256 signature verifies with `k`, `aud` is this service's origin, `exp` is in the future and
  at most 24 h away, `sub` is a mailto: or https: URI;
- `Content-Encoding: aes128gcm`, `TTL` a whole number of seconds, `Urgency` one of RFC 8030's, `Topic` at most 32
  characters of the base64url alphabet (Urgency and Topic required unless --lenient: the broker always sends them);
- the body is at most 4096 bytes and decrypts (RFC 8291 with http_ece) with the subscription's private key and auth
  secret, to JSON that leaks no place or person (privacy.py).
It answers 201 and records the decrypted message, or refuses (400/401/403/413) and records why as a failure. It can
answer 410 Gone for a subscription (`gone(id)`, `POST /control/gone {"id": ...}`) and 500 for a while
(`fail_for(seconds)`, `POST /control/fail {"seconds": N}`); unknown subscriptions get 404. `GET /control/messages`,
`GET /control/failures` return what was recorded.

Usage: push_service.py [--port 0] [--vapid-key <base64url public key>] [--record pushes.jsonl] [--lenient]
       push_service.py subscription --service http://127.0.0.1:PORT   (prints a new subscription's JSON)
"""

import argparse
import base64
import json
import os
import re
import secrets
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import privacy

HOST = "127.0.0.1"
MAX_BODY = 4096
MAX_JWT_LIFETIME = 24 * 3600
CLOCK_SKEW = 60
URGENCIES = {"very-low", "low", "normal", "high"}
TOPIC = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_bytes(key):
    return key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


class Refused(Exception):
    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def parse_vapid(header):
    """`vapid t=<JWT>, k=<key>` as (t, k); RFC 8292 allows spaces around the comma."""
    found = re.fullmatch(r"\s*vapid\s+(.+)", header or "", re.IGNORECASE)
    if not found:
        raise Refused(401, f"Authorization is not 'vapid t=..., k=...': {header[:20] + '...' if header else 'missing'}")
    params = {}
    for part in found.group(1).split(","):
        name, _, value = part.strip().partition("=")
        params[name.strip().lower()] = value.strip()
    if not params.get("t") or not params.get("k"):
        raise Refused(401, "Authorization lacks t= or k=")
    return params["t"], params["k"]


def verify_vapid(header, expected_key, origin, now=None):
    """Checks an Authorization header by RFC 8292; returns the JWT's claims, or raises Refused."""
    now = time.time() if now is None else now
    token, key = parse_vapid(header)
    if expected_key and key != expected_key:
        raise Refused(403, "k= is not the application server key the subscription was made with")
    try:
        public_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(key))
    except ValueError as error:
        raise Refused(401, f"k= is not a P-256 point: {error}")
    parts = token.split(".")
    if len(parts) != 3:
        raise Refused(401, "t= is not a JWT (three dot-separated parts)")
    try:
        header_json = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except ValueError as error:
        raise Refused(401, f"the JWT does not decode: {error}")
    if header_json.get("alg") != "ES256":
        raise Refused(401, f"the JWT's alg is {header_json.get('alg')!r}, not ES256")
    if header_json.get("typ") not in (None, "JWT"):
        raise Refused(401, f"the JWT's typ is {header_json.get('typ')!r}")
    if len(signature) != 64:
        raise Refused(401, f"an ES256 signature is 64 bytes (r and s), this one {len(signature)}")
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public_key.verify(der, (parts[0] + "." + parts[1]).encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise Refused(401, "the JWT's signature does not verify with k=")
    if claims.get("aud") != origin:
        raise Refused(401, f"aud is {claims.get('aud')!r}, not this push service's origin {origin}")
    exp = claims.get("exp")
    if not isinstance(exp, int) or isinstance(exp, bool):
        raise Refused(401, f"exp is {exp!r}, not a whole number of seconds")
    if exp <= now:
        raise Refused(401, "the JWT has expired")
    if exp > now + MAX_JWT_LIFETIME + CLOCK_SKEW:
        raise Refused(401, f"exp is {int(exp - now)} s away, more than 24 h")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not re.match(r"^(mailto:[^\s]+|https://[^\s]+)$", sub):
        raise Refused(401, f"sub is {sub!r}, not a mailto: or https: URI")
    return claims


class PushService:
    """The stand-in; `start()` serves it on a thread (port 0: a free one), `stop()` ends it."""

    def __init__(self, port=0, vapid_key=None, record_path=None, strict=True, forbidden_strings=()):
        self.vapid_key = vapid_key
        self.record_path = record_path
        self.strict = strict
        self.forbidden_strings = tuple(forbidden_strings)
        self.lock = threading.Lock()
        self.subscriptions = {}   # id -> (private key, auth secret)
        self.gone_ids = set()
        self.failing_ids = set()
        self.attempts = []  # pushes to a failing subscription: decrypted, recorded, answered 503
        self.messages = []
        self.failures = []
        self.fail_until = 0.0
        self.http = ThreadingHTTPServer((HOST, port), self._handler())
        self.port = self.http.server_address[1]
        self.thread = None

    @property
    def origin(self):
        return f"http://{HOST}:{self.port}"

    def start(self):
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.http.shutdown()
        self.http.server_close()

    def new_subscription(self):
        """A browser's subscription to this service: the JSON PushSubscription.toJSON() gives."""
        subscription_id = secrets.token_urlsafe(12)
        private_key = ec.generate_private_key(ec.SECP256R1())
        auth = os.urandom(16)
        with self.lock:
            self.subscriptions[subscription_id] = (private_key, auth)
        return {"endpoint": f"{self.origin}/push/{subscription_id}", "expirationTime": None,
                "keys": {"p256dh": b64url(public_bytes(private_key)), "auth": b64url(auth)}}

    def gone(self, subscription_id):
        """From now on, pushes to this subscription get 410 Gone (the donor unsubscribed, or the browser went)."""
        with self.lock:
            self.gone_ids.add(subscription_id)

    def failing(self, subscription_id):
        """From now on, pushes to this subscription are checked and recorded as attempts, then answered 503 (a
        browser whose push service keeps failing), while the others' are taken."""
        with self.lock:
            self.failing_ids.add(subscription_id)

    def fail_for(self, seconds):
        with self.lock:
            self.fail_until = time.monotonic() + max(0.0, float(seconds))

    def snapshot(self):
        with self.lock:
            return {"messages": list(self.messages), "failures": list(self.failures), "attempts": list(self.attempts)}

    def _record(self, kind, entry):
        entry = dict(entry, kind=kind, received_at=time.time())
        (self.messages if kind == "message" else self.failures).append(entry)
        if self.record_path:
            with open(self.record_path, "a", encoding="utf-8") as output:
                output.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def receive(self, subscription_id, headers, body):
        """Handles one push; returns (status, extra headers)."""
        with self.lock:
            if time.monotonic() < self.fail_until:
                return 500, {}
            if subscription_id in self.gone_ids:
                return 410, {}
            keys = self.subscriptions.get(subscription_id)
            if keys is None:
                return 404, {}
            try:
                message, checked = self.check(keys, headers, body)
            except Refused as refusal:
                self._record("failure", {"subscription": subscription_id, "status": refusal.status, "reason": refusal.reason})
                return refusal.status, {}
            if subscription_id in self.failing_ids:
                self.attempts.append(dict(checked, subscription=subscription_id, message=message, received_at=time.time()))
                return 503, {}
            for problem in privacy.problems(json.dumps(message, ensure_ascii=False), self.forbidden_strings):
                self._record("failure", {"subscription": subscription_id, "status": 201, "reason": "privacy: " + problem,
                                         "message": message})
            self._record("message", dict(checked, subscription=subscription_id, message=message))
            return 201, {"Location": f"/message/{secrets.token_urlsafe(8)}"}

    def check(self, keys, headers, body):
        private_key, auth = keys
        claims = verify_vapid(headers.get("authorization"), self.vapid_key, self.origin)
        if headers.get("content-encoding", "").lower() != "aes128gcm":
            raise Refused(400, f"Content-Encoding is {headers.get('content-encoding')!r}, not aes128gcm")
        ttl = headers.get("ttl")
        if ttl is None or not re.fullmatch(r"\d+", ttl):
            raise Refused(400, f"TTL is {ttl!r}, not a whole number of seconds")
        urgency = headers.get("urgency")
        if (urgency is not None or self.strict) and urgency not in URGENCIES:
            raise Refused(400, f"Urgency is {urgency!r}, not one of {sorted(URGENCIES)}")
        topic = headers.get("topic")
        if (topic is not None or self.strict) and not (topic and TOPIC.match(topic)):
            raise Refused(400, f"Topic is {topic!r}, not 1 to 32 characters of the base64url alphabet")
        if len(body) > MAX_BODY:
            raise Refused(413, f"the body is {len(body)} bytes, more than {MAX_BODY}")
        if len(body) < 21 + 65 + 17:
            raise Refused(400, f"the body is {len(body)} bytes, too short for an aes128gcm header, key and record")
        record_size = int.from_bytes(body[16:20], "big")
        key_id_length = body[20]
        if key_id_length != 65 or body[21] != 4:
            raise Refused(400, f"the aes128gcm keyid is {key_id_length} bytes, not the sender's 65-byte P-256 point")
        try:
            plaintext = http_ece.decrypt(body, private_key=private_key, auth_secret=auth, version="aes128gcm")
        except Exception as error:
            raise Refused(400, f"the body does not decrypt with the subscription's keys: {type(error).__name__} {error}")
        try:
            message = json.loads(plaintext)
        except ValueError:
            raise Refused(400, "the decrypted body is not JSON")
        checked = {"ttl": int(ttl), "urgency": urgency, "topic": topic, "record_size": record_size,
                   "vapid_sub": claims.get("sub"), "vapid_exp": claims.get("exp"), "body_bytes": len(body)}
        return message, checked

    def _handler(self):
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, status, body=None, headers=None):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                snapshot = service.snapshot()
                if self.path == "/control/messages":
                    self._answer(200, snapshot["messages"])
                elif self.path == "/control/failures":
                    self._answer(200, snapshot["failures"])
                else:
                    self._answer(404, {"error": "GET serves /control/messages and /control/failures"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, MAX_BODY * 4))
                if self.path == "/control/subscriptions":
                    self._answer(201, service.new_subscription())
                    return
                if self.path in ("/control/gone", "/control/fail"):
                    try:
                        request = json.loads(body or b"{}")
                    except ValueError:
                        request = {}
                    if self.path == "/control/gone":
                        service.gone(str(request.get("id", "")))
                    else:
                        service.fail_for(request.get("seconds", 0))
                    self._answer(200, {})
                    return
                found = re.fullmatch(r"/push/([A-Za-z0-9_-]+)", self.path)
                if not found:
                    self._answer(404, {"error": "POST /push/<subscription id>"})
                    return
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, extra = service.receive(found.group(1), headers, body)
                self._answer(status, None, extra)

            def log_message(self, *args):
                pass

        return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    make = sub.add_parser("subscription", help="ask a running stand-in for a new subscription and print its JSON")
    make.add_argument("--service", required=True, help="the stand-in's origin, http://127.0.0.1:PORT")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--vapid-key", help="the broker's application server key (GET /v1/push/key's public_key)")
    parser.add_argument("--record", help="JSON lines file of messages and failures")
    parser.add_argument("--lenient", action="store_true", help="accept pushes without Urgency or Topic")
    parser.add_argument("--forbid", action="append", default=[], help="a text no push may hold (repeatable)")
    options = parser.parse_args()
    if options.command == "subscription":
        request = urllib.request.Request(options.service.rstrip("/") + "/control/subscriptions", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            print(response.read().decode())
        return
    service = PushService(options.port, options.vapid_key, options.record, not options.lenient, options.forbid).start()
    print(f"listening on {service.origin}", flush=True)
    try:
        service.thread.join()
    except KeyboardInterrupt:
        service.stop()


if __name__ == "__main__":
    main()
