"""What a device's message says, once read: a :class:`Reading`, or :class:`Unreadable`.

Every format module turns (topic, bytes, receipt time) into one of these two and never
raises; the reason of an :class:`Unreadable` is one plain sentence, kept with the
device's bytes in the evidence log. The helpers here are shared by the formats: the
dotted-path lookup, counts (integral floats such as ``120.0`` are whole numbers, any
other fraction is unreadable), and device times.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import msgspec

from kent_ops.core.devices.spec import SourceSpec

__all__ = [
    "MAX_COUNT",
    "MISSING",
    "Format",
    "Reading",
    "Unreadable",
    "count_at",
    "find",
    "frame_counter",
    "parse_json",
    "parse_time",
    "read_fields",
]

MAX_COUNT = 10**9
"""No gate or lot counts a billion; larger numbers are corrupt, not crowds."""
MISSING: Any = object()
"""What :func:`find` returns where a path leads nowhere."""
_FRACTION = re.compile(r"(\.\d{6})\d+")


@dataclass(frozen=True, slots=True)
class Reading:
    """The figures one device message carries."""

    in_: int | None = None
    out: int | None = None
    deltas: bool = False
    """``in_``/``out`` are the persons since the device's last message, not totals."""
    occupied: int | None = None
    free: int | None = None
    ts: datetime | None = None
    """The device's (or network server's) time; None: the time of receipt."""
    counter: int | None = None
    """The LoRaWAN frame counter or the device's own sequence, when it has one."""


class Unreadable(NamedTuple):
    """A message the adapter could not read, and why (one sentence)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Format:
    """What one format module declares (as ``FORMAT``): all the rest of kent-ops knows of it."""

    name: str
    """What a permit's ``source`` names it by."""
    read: Callable[[SourceSpec, str, bytes], Reading | Unreadable]
    """The device's message (topic, bytes) as a reading, or why not; never raises."""
    own_counter: bool = True
    """Its messages carry their frame counter; only a format without one takes ``seq``."""
    gate_paths: Callable[[int], dict[str, str]] | None = None
    """The device's own names for a gate's fields, by counting line (the ``line`` key),
    used when the permit names none; None for a format without counting lines."""


def parse_json(payload: bytes) -> Any:
    """The decoded JSON, or :class:`Unreadable` saying why it is not JSON."""
    try:
        return msgspec.json.decode(payload)
    except msgspec.DecodeError as exc:
        return Unreadable(f"not valid JSON: {exc}")


def find(data: Any, path: str) -> Any:
    """The value at a dotted path (``a.b.0``), or a private marker when there is none."""
    node = data
    for part in path.split("."):
        if isinstance(node, dict):
            node = node.get(part, MISSING)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
        if node is MISSING:
            return MISSING
    return node


def count_at(data: Any, path: str, label: str) -> int | Unreadable:
    """A whole, non-negative count at ``path``; ``label`` names it in the reason."""
    value = find(data, path)
    if value is MISSING:
        return Unreadable(f"no {label} field {path!r} in the message")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return Unreadable(f"{label} field {path!r} is {_describe(value)}, not a number")
    if isinstance(value, float):
        if not value.is_integer():
            return Unreadable(f"{label} field {path!r} is {value!r}, not a whole number")
        value = int(value)
    if value < 0:
        return Unreadable(f"{label} field {path!r} is negative ({value})")
    if value > MAX_COUNT:
        return Unreadable(f"{label} field {path!r} is out of range ({value})")
    return value


def parse_time(value: Any, label: str) -> datetime | Unreadable:
    """ISO 8601 with an offset or ``Z`` (nanoseconds cut to microseconds), or Unix seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            return Unreadable(f"{label} {value!r} is not a time")
    if not isinstance(value, str):
        return Unreadable(f"{label} is {_describe(value)}, not a time")
    text = _FRACTION.sub(r"\1", value.strip())
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return Unreadable(f"{label} {value!r} is not an ISO 8601 time")
    if t.tzinfo is None:
        return Unreadable(f"{label} {value!r} has no offset (add e.g. Z or -04:00)")
    return t


def read_fields(
    spec: SourceSpec, data: Any, ts: datetime | None, counter: int | None
) -> Reading | Unreadable:
    """The sensor's figures from ``data`` (the device's own object) by the spec's paths.

    ``ts`` and ``counter`` are the format's own (an envelope's time and frame counter);
    a ``ts`` path in the spec names the device's own time instead.
    """
    if spec.ts is not None:
        raw = find(data, spec.ts)
        if raw is MISSING:
            return Unreadable(f"no ts field {spec.ts!r} in the message")
        parsed = parse_time(raw, f"ts field {spec.ts!r}")
        if isinstance(parsed, Unreadable):
            return parsed
        ts = parsed
    if spec.kind == "lot":
        label, path = ("occupied", spec.occupied) if spec.occupied else ("free", spec.free)
        assert path is not None
        value = count_at(data, path, label)
        if isinstance(value, Unreadable):
            return value
        if label == "occupied":
            return Reading(occupied=value, ts=ts, counter=counter)
        return Reading(free=value, ts=ts, counter=counter)
    in_path, out_path = (spec.in_delta, spec.out_delta) if spec.deltas else (spec.in_, spec.out)
    assert in_path is not None
    assert out_path is not None
    n_in = count_at(data, in_path, "in")
    if isinstance(n_in, Unreadable):
        return n_in
    n_out = count_at(data, out_path, "out")
    if isinstance(n_out, Unreadable):
        return n_out
    return Reading(in_=n_in, out=n_out, deltas=spec.deltas, ts=ts, counter=counter)


def frame_counter(value: Any, label: str) -> int | None | Unreadable:
    """A frame counter or sequence: absent is None, else a whole non-negative number."""
    if value is MISSING or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return Unreadable(f"{label} is {_describe(value)}, not a frame counter")
    return value


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:40] + "…"
        return f"the text {shown!r}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return repr(value)
