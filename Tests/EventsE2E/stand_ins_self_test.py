#!/usr/bin/env python3
"""The test stand-ins checked on their own, with no broker: each must accept what is right and refuse what is not,
or a passing end-to-end test would prove nothing.

- webhook_receiver.py: a delivery signed by the Standard Webhooks library itself is accepted and recorded once (a
  redelivery is a duplicate); one signed with another secret, or with a header missing, or too old, is refused (401)
  and recorded as a failure; one carrying a coordinate, a lat key, an e-mail or a forbidden text is recorded as a
  failure; told to fail (control endpoint, flag file) it answers 500 and records nothing, then accepts again.
- push_service.py: decrypts RFC 8291's own example (Appendix A); a push encrypted with http_ece for a subscription
  it made, with a VAPID JWT signed with cryptography (and one signed by py_vapid, an independent implementation), is
  accepted (201) and its message recorded; a JWT signed with another key, for another audience, expired, or longer
  than 24 h, a wrong Content-Encoding, a missing TTL/Urgency/Topic, a body encrypted for other keys, or too large,
  are refused and recorded; a subscription marked gone gets 410, an unknown one 404; a push holding a coordinate is
  recorded as a failure.
Run by scripts/events-stand-ins-test. Exits 1 on the first failed check.
"""

import base64
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone

import http_ece
import py_vapid
import standardwebhooks
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from push_service import PushService, b64url, b64url_decode, public_bytes  # noqa: E402
from webhook_receiver import WebhookReceiver  # noqa: E402

CHECKS = {"passed": 0}


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)
    CHECKS["passed"] += 1
    print(f"ok: {what}", flush=True)


def post(url, body, headers):
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def new_secret():
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


# ---------------------------------------------------------------- webhooks


def signed(secret, event_id, body, at=None):
    """The headers a Standard Webhooks sender puts on `body`, made by the library itself."""
    at = at or datetime.now(tz=timezone.utc)
    signature = standardwebhooks.Webhook(secret).sign(event_id, at, body)
    return {"webhook-id": event_id, "webhook-timestamp": str(int(at.timestamp())), "webhook-signature": signature,
            "Content-Type": "application/json"}


def event_body(event_type="tracking.approaching", **data):
    payload = {"type": event_type, "timestamp": "2026-11-27T16:20:00.000Z",
               "data": dict({"donation": "d-1", "destination": "home", "eta_minutes": 4, "distance_m": 1200}, **data)}
    return json.dumps(payload, separators=(",", ":"))


def event_id():
    return "evt_" + os.urandom(16).hex()


def webhook_checks(workdir):
    secret, rotated, other = new_secret(), new_secret(), new_secret()
    flag = os.path.join(workdir, "fail-now")
    record = os.path.join(workdir, "webhooks.jsonl")
    receiver = WebhookReceiver([secret, rotated], record_path=record, fail_file=flag,
                               forbidden_strings=["Caritas Palermo"]).start()
    url = receiver.url + "/webhook"
    try:
        first = event_id()
        body = event_body()
        check(post(url, body.encode(), signed(secret, first, body)) == 200, "a delivery signed by standardwebhooks is accepted")
        check(post(url, body.encode(), signed(secret, first, body)) == 200, "its redelivery (same webhook-id) is answered 200")
        state = receiver.snapshot()
        check([e["id"] for e in state["events"]] == [first] and state["duplicates"] == 1 and not state["failures"],
              "it is recorded once, the redelivery counted as a duplicate, with no failure")
        check(state["events"][0]["payload"]["data"]["eta_minutes"] == 4, "the recorded event is the verified payload")

        second = event_id()
        both = signed(secret, second, body)
        both["webhook-signature"] = signed(other, second, body)["webhook-signature"] + " " + signed(rotated, second, body)["webhook-signature"]
        check(post(url, body.encode(), both) == 200, "during a rotation a signature by either configured secret is accepted")

        forged = event_id()
        check(post(url, body.encode(), signed(other, forged, body)) == 401, "a delivery signed with another secret is refused (401)")
        tampered = event_id()
        headers = signed(secret, tampered, body)
        check(post(url, body.replace("1200", "1300").encode(), headers) == 401, "a body changed after signing is refused")
        missing = signed(secret, event_id(), body)
        del missing["webhook-timestamp"]
        check(post(url, body.encode(), missing) == 401, "a delivery without webhook-timestamp is refused")
        old = event_id()
        check(post(url, body.encode(), signed(secret, old, body, datetime.fromtimestamp(time.time() - 600, tz=timezone.utc))) == 401,
              "a delivery signed 10 minutes ago is refused (replay window)")
        state = receiver.snapshot()
        refused_ids = {f["id"] for f in state["failures"]}
        check({forged, tampered, old} <= refused_ids and forged not in {e["id"] for e in state["events"]},
              "each refused delivery is a failure record, none is an event")

        before = len(receiver.snapshot()["failures"])
        leaks = [
            ("a lat key", event_body(lat=-34.6037)),
            ("a coordinate pair in text", event_body(note="near -34.6037, -58.3816")),
            ("an e-mail", event_body(note="donor@example.org")),
            ("a fractional degree", event_body(distance_m=58.3816)),
            ("the institution's name", event_body(note="Caritas Palermo")),
        ]
        sent = []
        for what, leaking in leaks:
            leak_id = event_id()
            sent.append((what, leak_id))
            check(post(url, leaking.encode(), signed(secret, leak_id, leaking)) == 200, f"a payload with {what} is received")
        flagged = receiver.snapshot()["failures"][before:]
        for what, leak_id in sent:
            check(any(f["id"] == leak_id for f in flagged), f"a payload with {what} is a failure record")
        bad_id = "evt_NOT-HEX"
        check(post(url, body.encode(), signed(secret, bad_id, body)) == 200 and
              any(f["id"] == bad_id and "webhook-id" in f["reason"] for f in receiver.snapshot()["failures"]),
              "a webhook-id that is not evt_ + 32 hex digits is a failure record")

        check(post(receiver.url + "/control/fail", b'{"seconds": 1.5}', {}) == 200, "the receiver can be told to fail")
        during = event_id()
        check(post(url, body.encode(), signed(secret, during, body)) == 500, "while failing it answers 500")
        check(during not in {e["id"] for e in receiver.snapshot()["events"]}, "and records nothing")
        time.sleep(1.6)
        check(post(url, body.encode(), signed(secret, during, body)) == 200, "after the failing time the same delivery is accepted")
        open(flag, "w").close()
        check(post(url, body.encode(), signed(secret, event_id(), body)) == 500, "while the flag file exists it answers 500")
        os.remove(flag)
        check(post(url, body.encode(), signed(secret, event_id(), body)) == 200, "without the flag file it accepts again")
        with open(record) as lines:
            kinds = [json.loads(line)["kind"] for line in lines]
        check(kinds.count("event") == len(receiver.snapshot()["events"]) and "failure" in kinds,
              "the JSON lines file holds every event and failure")
    finally:
        receiver.stop()


# ---------------------------------------------------------------- pushes


def vapid_jwt(private_key, claims):
    """An ES256 JWT made with cryptography alone (the JOSE signature is r and s, 32 bytes each)."""
    def part(value):
        return b64url(json.dumps(value, separators=(",", ":")).encode())
    signing_input = part({"typ": "JWT", "alg": "ES256"}) + "." + part(claims)
    r, s = decode_dss_signature(private_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def push_headers(vapid_key, audience, claims=None, **overrides):
    claims = claims or {"aud": audience, "exp": int(time.time()) + 3600, "sub": "mailto:ops@example.org"}
    headers = {"Authorization": f"vapid t={vapid_jwt(vapid_key, claims)}, k={b64url(public_bytes(vapid_key))}",
               "Content-Encoding": "aes128gcm", "TTL": "3600", "Urgency": "high", "Topic": "donation-d-1",
               "Content-Type": "application/octet-stream"}
    headers.update(overrides)
    return {name: value for name, value in headers.items() if value is not None}


def encrypt_for(subscription, message):
    """The body a sender makes for a subscription (RFC 8291 with http_ece): a new ephemeral key and salt."""
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    return http_ece.encrypt(json.dumps(message).encode(), private_key=ephemeral,
                            dh=b64url_decode(subscription["keys"]["p256dh"]),
                            auth_secret=b64url_decode(subscription["keys"]["auth"]), version="aes128gcm")


def rfc8291_example():
    """RFC 8291 Appendix A: the user agent's key and auth secret, and the message the application server sent."""
    key = ec.derive_private_key(int.from_bytes(b64url_decode("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"), "big"), ec.SECP256R1())
    body = b64url_decode(
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
    return key, b64url_decode("BTBZMqHH6r4Tts7J_aSIgg"), body


def push_checks(workdir):
    key, auth, body = rfc8291_example()
    check(http_ece.decrypt(body, private_key=key, auth_secret=auth, version="aes128gcm") == b"When I grow up, I want to be a watermelon",
          "RFC 8291 Appendix A's message decrypts as the stand-in decrypts")
    vapid = ec.generate_private_key(ec.SECP256R1())
    service = PushService(vapid_key=b64url(public_bytes(vapid)), record_path=os.path.join(workdir, "pushes.jsonl")).start()
    try:
        subscription = service.new_subscription()
        check(subscription["endpoint"].startswith(service.origin + "/push/") and len(b64url_decode(subscription["keys"]["p256dh"])) == 65
              and len(b64url_decode(subscription["keys"]["auth"])) == 16, "a new subscription has an endpoint, a P-256 key and a 16-byte auth")
        endpoint = subscription["endpoint"]
        message = {"title": "Almost there", "body": "The volunteer is about 4 minutes away.", "tag": "donation-d-1",
                   "donation": "d-1", "type": "tracking.approaching"}
        check(post(endpoint, encrypt_for(subscription, message), push_headers(vapid, service.origin)) == 201,
              "a push encrypted with http_ece and signed with a cryptography-made VAPID JWT is accepted (201)")
        recorded = service.snapshot()["messages"]
        check(len(recorded) == 1 and recorded[0]["message"] == message and recorded[0]["urgency"] == "high"
              and recorded[0]["ttl"] == 3600 and recorded[0]["record_size"] == 4096, "its decrypted message and headers are recorded")

        signer = py_vapid.Vapid02()
        signer.private_key = vapid
        independent = signer.sign({"aud": service.origin, "sub": "mailto:ops@example.org"})
        headers = push_headers(vapid, service.origin, Authorization=independent["Authorization"])
        check(post(endpoint, encrypt_for(subscription, message), headers) == 201, "a VAPID header made by py_vapid is accepted too")

        refusals = [
            ("a JWT signed with another key", push_headers(vapid, service.origin, Authorization=push_headers(
                ec.generate_private_key(ec.SECP256R1()), service.origin)["Authorization"].split(", k=")[0]
                + ", k=" + b64url(public_bytes(vapid))), 401),
            ("another application server's key", push_headers(ec.generate_private_key(ec.SECP256R1()), service.origin), 403),
            ("another audience", push_headers(vapid, service.origin, claims={
                "aud": "https://fcm.googleapis.com", "exp": int(time.time()) + 3600, "sub": "mailto:ops@example.org"}), 401),
            ("an expired JWT", push_headers(vapid, service.origin, claims={
                "aud": service.origin, "exp": int(time.time()) - 5, "sub": "mailto:ops@example.org"}), 401),
            ("a JWT valid for 25 h", push_headers(vapid, service.origin, claims={
                "aud": service.origin, "exp": int(time.time()) + 25 * 3600, "sub": "mailto:ops@example.org"}), 401),
            ("a sub that is no mailto: or https:", push_headers(vapid, service.origin, claims={
                "aud": service.origin, "exp": int(time.time()) + 3600, "sub": "ops"}), 401),
            ("no Authorization", push_headers(vapid, service.origin, Authorization=None), 401),
            ("Content-Encoding aesgcm", push_headers(vapid, service.origin, **{"Content-Encoding": "aesgcm"}), 400),
            ("no TTL", push_headers(vapid, service.origin, TTL=None), 400),
            ("no Urgency", push_headers(vapid, service.origin, Urgency=None), 400),
            ("a Topic of 33 characters", push_headers(vapid, service.origin, Topic="t" * 33), 400),
        ]
        for what, headers, status in refusals:
            answered = post(endpoint, encrypt_for(subscription, message), headers)
            check(answered == status, f"a push with {what} is refused ({status}; answered {answered})")
        other = service.new_subscription()
        check(post(endpoint, encrypt_for(other, message), push_headers(vapid, service.origin)) == 400,
              "a push encrypted for another subscription's keys is refused")
        big = dict(message, body="x" * 5000)
        check(post(endpoint, encrypt_for(subscription, big), push_headers(vapid, service.origin)) == 413, "a body over 4096 bytes is refused (413)")
        failures = service.snapshot()["failures"]
        check(len(failures) == len(refusals) + 2 and len(service.snapshot()["messages"]) == 2,
              "each refusal is a failure record; only the two good pushes are messages")

        leaking = dict(message, body="Near -34.6037, -58.3816")
        check(post(endpoint, encrypt_for(subscription, leaking), push_headers(vapid, service.origin)) == 201,
              "a push holding a coordinate decrypts")
        check(any("privacy" in f["reason"] for f in service.snapshot()["failures"]), "and is recorded as a privacy failure")

        service.gone(endpoint.rsplit("/", 1)[1])
        check(post(endpoint, encrypt_for(subscription, message), push_headers(vapid, service.origin)) == 410,
              "a subscription marked gone answers 410")
        check(post(service.origin + "/push/never-made", b"x" * 120, push_headers(vapid, service.origin)) == 404,
              "an unknown subscription answers 404")
        service.fail_for(1)
        check(post(other["endpoint"], encrypt_for(other, message), push_headers(vapid, service.origin)) == 500, "told to fail, it answers 500")
    finally:
        service.stop()


def main():
    workdir = tempfile.mkdtemp(prefix="events-stand-ins-")
    try:
        webhook_checks(workdir)
        push_checks(workdir)
    except CheckFailed as failure:
        print(f"FAIL: {failure}", flush=True)
        return 1
    print(f"stand-ins self-test: {CHECKS['passed']} checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
