"""What each kind of sensor publishes: its payload as a frozen Struct, and its checks.

docs/protocol.md ("Sensor payloads") describes each for device makers. A Struct here
says the fields and their types (msgspec refuses a wrong type); its ``check`` says what
the types do not (signs, ranges, non-empty text). Each Struct is named by one entry of
:data:`kent_ops.core.sensor_kinds.SENSOR_KINDS`, through which the decoder
(:mod:`kent_ops.core.wire.inbound`) finds it; the wire package re-exports them.

They live outside :mod:`kent_ops.core.wire` because the table of sensor kinds names
them and the wire's topics read that table: this module imports nothing of kent-ops.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args

import msgspec

__all__ = [
    "MAX_COUNT",
    "ROLES",
    "MAX_ROSTER",
    "Badge",
    "GateCount",
    "LotOccupancy",
    "OnDuty",
    "Reading",
    "Role",
    "Roster",
    "check_badge",
    "check_gate",
    "check_lot",
    "check_roster",
    "count_problem",
    "seq_problem",
]

MAX_COUNT = 10**9
"""No gate or lot counts a billion; larger numbers are corrupt, not crowds."""
MAX_SEQ = 2**53
"""The largest ``seq`` every JSON reader holds exactly."""

Role = Literal["doctor", "nurse", "security"]
ROLES: tuple[str, ...] = get_args(Role)
"""The roles a badge reader reports."""


class GateCount(msgspec.Struct, frozen=True):
    """Cumulative totals from a gate counter since the device started."""

    seq: int
    ts: datetime
    in_total: int
    out_total: int


class LotOccupancy(msgspec.Struct, frozen=True):
    """Cars now in a lot."""

    seq: int
    ts: datetime
    occupied: int


class Badge(msgspec.Struct, frozen=True):
    """A badge scanned on or off duty at a staff station."""

    seq: int
    ts: datetime
    badge: str
    role: Role
    action: Literal["on", "off"]


class OnDuty(msgspec.Struct, frozen=True):
    """One badge on duty, as a roster names it."""

    badge: str
    role: Role


class Roster(msgspec.Struct, frozen=True):
    """Who is on duty at a staff station, as its badge reader re-states it: every badge
    scanned on there and not off since. It shares the reader's ``seq`` with its scans, so
    a roster after a gap makes the station's roster known again (docs/protocol.md)."""

    seq: int
    ts: datetime
    on_duty: tuple[OnDuty, ...]


Reading = GateCount | LotOccupancy | Badge | Roster
"""A sensor's message: the payload of one kind in core/sensor_kinds/table.py, or of its
re-statement (a new kind's payload joins this union, or its ``SensorKind`` does not
type-check)."""

MAX_ROSTER = 1000
"""The most badges one roster names (a roster of a thousand is about 40 KB)."""


def check_gate(record: GateCount) -> str | None:
    """Totals and ``seq`` in range (the common case in one expression: it is the hot path)."""
    if 0 <= record.seq <= MAX_SEQ and 0 <= record.in_total <= MAX_COUNT >= record.out_total >= 0:
        return None
    return (
        seq_problem(record.seq)
        or count_problem("in_total", record.in_total)
        or count_problem("out_total", record.out_total)
    )


def check_lot(record: LotOccupancy) -> str | None:
    return seq_problem(record.seq) or count_problem("occupied", record.occupied)


def check_badge(record: Badge) -> str | None:
    if not record.badge.strip() or len(record.badge) > 200:
        return "badge id is empty or too long"
    return seq_problem(record.seq)


def check_roster(record: Roster) -> str | None:
    if len(record.on_duty) > MAX_ROSTER:
        return f"a roster names at most {MAX_ROSTER:,} badges"
    seen: set[str] = set()
    for entry in record.on_duty:
        if not entry.badge.strip() or len(entry.badge) > 200:
            return "badge id is empty or too long"
        if entry.badge in seen:
            return f"badge {entry.badge!r} is named twice in the roster"
        seen.add(entry.badge)
    return seq_problem(record.seq)


def seq_problem(seq: int) -> str | None:
    """Why ``seq`` cannot be a sensor's sequence number, or None."""
    if seq < 0:
        return f"negative seq {seq}"
    if seq > MAX_SEQ:
        return "seq is out of range"
    return None


def count_problem(name: str, value: int) -> str | None:
    """Why ``value`` cannot be a count of persons or cars, or None."""
    if value < 0:
        return f"negative count: {name} is {value}"
    if value > MAX_COUNT:
        return f"count out of range: {name} is {value}"
    return None
