"""What no event may carry (docs: the events contract): a coordinate, an address or label, an e-mail, a name.

Both stand-ins (webhook_receiver.py, push_service.py) run every payload they receive through `problems`, and record
each problem as a test failure: the broker must never send a volunteer's position, or the donor's details, out of
the broker by a webhook or a push.
"""

import json
import re

# Keys that would carry a place or a person, in any letter case.
FORBIDDEN_KEYS = {
    "lat", "lon", "lng", "latitude", "longitude", "coordinates", "coords", "position", "location", "geo",
    "address", "label", "home", "institution_name", "email", "e-mail", "donor", "volunteer",
}
# Two decimal numbers side by side, as a coordinate is written: "-34.6037, -58.3816" or "-34.6037 -58.3816".
NUMBER_PAIR = re.compile(r"-?\d{1,3}\.\d{3,}\s*[,; ]\s*-?\d{1,3}\.\d{3,}")


def _walk(value, path, found):
    if isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(key, str) and key.lower() in FORBIDDEN_KEYS:
                found.append(f"key {path}.{key} may hold a place or a person")
            _walk(inner, f"{path}.{key}", found)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _walk(inner, f"{path}[{index}]", found)
    elif isinstance(value, float) and not value.is_integer() and abs(value) <= 180:
        # The contract's numbers are whole (eta_minutes, distance_m rounded to 100 m, silent_seconds): a fraction
        # within +-180 looks like a degree.
        found.append(f"{path} = {value!r} looks like a coordinate")


def problems(raw, forbidden_strings=()):
    """Every reason `raw` (the bytes or text received) may leak a place or a person; empty when it is clean.

    `forbidden_strings`: texts the test knows must never leave the broker (the home's label, the institution's name,
    the donor's and the volunteer's e-mail).
    """
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
    found = []
    if "@" in text:
        found.append("an '@' (an e-mail address?)")
    pair = NUMBER_PAIR.search(text)
    if pair:
        found.append(f"a coordinate-like number pair {pair.group(0)!r}")
    for forbidden in forbidden_strings:
        if forbidden and forbidden.lower() in text.lower():
            found.append(f"the text {forbidden!r}")
    try:
        _walk(json.loads(text), "$", found)
    except ValueError:
        pass  # not JSON: the text checks above still apply
    return found
