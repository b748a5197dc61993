"""Valid wire payloads for the tests, each built from its Struct in :mod:`kent_ops.core.wire`.

A test that sends a valid reading, action or command builds it here, so its bytes are
the ones the sensors, the inspector's dashboard and the Clerk's command send
(docs/protocol.md) and a change of a payload's fields reaches every test. A test whose
subject is malformed input (fuzz, refused payloads, exact signed bytes) keeps its
hand-made bytes and says why beside them.

Times are aware datetimes, or ISO 8601 text as the tests' clocks write it (``Z`` or an
offset), read once here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from kent_ops.core import wire

Instant = datetime | str
"""An aware instant, or its ISO 8601 text."""


def instant(value: Instant) -> datetime:
    """``value`` as an aware datetime (ISO text is read with its ``Z`` or offset)."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def gate_count(
    seq: int, ts: Instant, in_total: int, out_total: int = 0, *, key: bytes | None = None
) -> bytes:
    """A gate counter's totals, as the device sends them (signed when given a key)."""
    return wire.encode_reading(wire.GateCount(seq, instant(ts), in_total, out_total), key)


def lot_occupancy(seq: int, ts: Instant, occupied: int, *, key: bytes | None = None) -> bytes:
    """A lot sensor's count of cars now in the lot."""
    return wire.encode_reading(wire.LotOccupancy(seq, instant(ts), occupied), key)


def badge(
    seq: int,
    ts: Instant,
    badge: str,
    role: str,
    action: str = "on",
    *,
    key: bytes | None = None,
) -> bytes:
    """A badge scanned on or off duty at a staff station."""
    scan = wire.Badge(seq, instant(ts), badge, role, action)  # type: ignore[arg-type]
    return wire.encode_reading(scan, key)


def note(ts: Instant, text: str, alert: str | None = None) -> bytes:
    """An inspector's note, optionally about one alert."""
    return wire.encode(wire.Note(instant(ts), text, alert))


def ack(ts: Instant, alert: str, comment: str = "") -> bytes:
    """An inspector's acknowledgement of an alert."""
    return wire.encode(wire.Ack(instant(ts), alert, comment))


def inspection(ts: Instant, item: str, result: str, note: str = "") -> bytes:
    """An inspector's mark of one checklist item (permit:C, D, F)."""
    mark = wire.Inspection(instant(ts), item, result, note)  # type: ignore[arg-type]
    return wire.encode(mark)


def adjust(ts: Instant, attendance: int, reason: str) -> bytes:
    """An inspector's correction of the attendance, with its reason."""
    return wire.encode(wire.Adjust(instant(ts), attendance, reason))


def clerk_permit(
    ts: Instant,
    status: str,
    effective_at: Instant,
    resolution: str,
    reason: str = "",
) -> bytes:
    """The Town Clerk's change of the permit's status (permit:G)."""
    at = instant(effective_at)
    change = wire.ClerkPermit(instant(ts), status, at, resolution, reason)  # type: ignore[arg-type]
    return wire.encode(change)


def notifier_sent(
    ts: Instant,
    alert: str,
    state: str,
    to: str,
    channel: str,
    ok: bool = True,
    error: str | None = None,
) -> bytes:
    """One attempt of the notifier to tell a person about an alert."""
    return wire.encode(wire.NotifierSent(instant(ts), alert, state, to, channel, ok, error))


INSPECTOR_ACTIONS: dict[str, Callable[..., bytes]] = {
    "note": note,
    "ack": ack,
    "inspection": inspection,
    "adjust": adjust,
}
"""Each leaf of ``inspector/{who}/…`` and the builder of its payload."""


def inspector_action(action: str, ts: Instant, **fields: object) -> bytes:
    """An inspector's ``action`` (note, ack, inspection or adjust) with its fields."""
    return INSPECTOR_ACTIONS[action](ts, **fields)
