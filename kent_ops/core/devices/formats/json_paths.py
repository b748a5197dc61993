"""``json``: any JSON message, its fields named by dotted path in the permit.

For devices with no format of their own here: ``in = "counts.in"``, ``free =
"lot.free"``, ``ts = "time"``, and optionally ``seq = "n"`` for the device's own
message counter. Without ``seq`` the adapter has no frame counter: it takes falling
totals as a device restart and a broker's redelivery of the same bytes as a repeat.
"""

from __future__ import annotations

from kent_ops.core.devices.reading import (
    MISSING,
    Format,
    Reading,
    Unreadable,
    find,
    frame_counter,
    parse_json,
    read_fields,
)
from kent_ops.core.devices.spec import SourceSpec

__all__ = ["FORMAT", "read"]


def read(spec: SourceSpec, topic: str, payload: bytes) -> Reading | Unreadable:
    """One JSON message as the sensor's reading."""
    message = parse_json(payload)
    if isinstance(message, Unreadable):
        return message
    counter: int | None = None
    if spec.seq is not None:
        raw = find(message, spec.seq)
        if raw is MISSING:
            return Unreadable(f"no seq field {spec.seq!r} in the message")
        seq = frame_counter(raw, f"seq field {spec.seq!r}")
        if isinstance(seq, Unreadable):
            return seq
        counter = seq
    return read_fields(spec, message, None, counter)


FORMAT = Format("json", read, own_counter=False)
