"""The names and frames neutral_bench.py's coordinator and workers agree on.

The broker is sent a volunteer's `publish` frame (docs/PROTOCOL.md, section 3) and delivers a `position` frame
to each watcher. The baseline forwards whatever text it is sent, so it is sent the very `position` frame the
broker would deliver for that publish (the broker's key order, numbers in their shortest form, a seq of the
broker's 16 digits): both servers then write frames of the same size to their subscribers, and the driver counts
a delivery the same way on both, as a received frame that holds `"type":"position"`.
"""

# A seq of the same 16 digits as the broker's (the volunteer's epoch in ms, times 1,000, plus a count).
SEQ_BASE = 1_763_757_600_000_000

# 100 latitudes, in the shortest form both Python and the broker write a double in.
LATITUDES = [repr(round(-34.6 + i * 1e-5, 5)) for i in range(100)]


def fanout_volunteer():
    """The one volunteer of the fan-out: the broker identity that publishes, and the baseline's room."""
    return "vol0@bench.example", "fanout"


def fanout_watcher(index):
    """Fan-out watcher `index`: its donor identity and the donation it watches (the fan-out volunteer carries it)."""
    return f"donor{index}@bench.example", f"f-{index}"


def pair(index):
    """Pair `index`: the volunteer's identity, the donor's, the donation between them, and the baseline's room."""
    return f"vol{index}@bench.example", f"donor{index}@bench.example", f"p-{index}", f"pair-{index}"


def storm_identity(index):
    """Connect-storm connection `index`'s identity: each its own, so no per-identity limit is reached."""
    return f"storm{index}@bench.example"


def publish_frame(count, timestamp_ms):
    """The `publish` a broker volunteer sends as its `count`th position (no `id`: the broker answers only a refusal)."""
    lat = LATITUDES[count % 100]
    return ('{"type":"publish","position":{"lat":%s,"lon":-58.38,"accuracy":5,"speed":8,"heading":90,"timestamp":%d}}'
            % (lat, timestamp_ms))


def position_frame(channel, count, timestamp_ms):
    """The `position` frame the broker delivers for `publish_frame(count, timestamp_ms)` on `channel`."""
    lat = LATITUDES[count % 100]
    return ('{"channel":"%s","position":{"accuracy":5,"heading":90,"lat":%s,"lon":-58.38,"speed":8,"timestamp":%d},'
            '"seq":%d,"type":"position"}' % (channel, lat, timestamp_ms, SEQ_BASE + count))


def is_position(message):
    """Whether a received text frame is a delivered position (on either server)."""
    return '"type":"position"' in message
