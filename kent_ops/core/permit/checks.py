"""The permit file's sections that need more than one field: small named readers.

Each reader takes the :class:`Reader` (which holds the TOML and collects problems),
reads its declared fields through the schema and adds the checks that join fields:
windows in order and apart, limits that agree, a revocation with its offset, the
deputies' hold and resume levels inside the permitted maximum. Properties and the
sensors on them are in :mod:`kent_ops.core.permit.places`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kent_ops.core.declared import ABSENT, Reader
from kent_ops.core.permit import schema as schema
from kent_ops.core.permit.model import Agent, Alerting, Window
from kent_ops.core.timeutil import instant_problem

KENT = ZoneInfo(schema.KENT_TIMEZONE)

__all__ = [
    "new_york_offset_problem",
    "check_issued_number",
    "check_limits",
    "check_revocation",
    "read_agent",
    "read_alerting",
    "read_event",
    "read_application",
    "read_signing",
    "read_windows",
]


def read_event(r: Reader) -> dict[str, Any]:
    """``[event]``: its id, name and time zone (a zone the system knows)."""
    v = r.read(schema.EVENT)
    tz = KENT
    if v["timezone"] is not None:
        try:
            tz = ZoneInfo(v["timezone"])
        except (ZoneInfoNotFoundError, ValueError):
            r.problem("event.timezone", f"unknown time zone {v['timezone']!r}")
    return {"event_id": v["id"], "event_name": v["name"], "timezone": tz}


def check_issued_number(r: Reader, status: str | None, number: str | None) -> None:
    """An issued permit is known by its number (permit:A)."""
    if status == "issued" and not number:
        r.problem("permit.number", "an issued permit needs its number", schema.CITE_PERMIT)


def read_agent(r: Reader, raw: dict[str, Any] | None) -> Agent | None:
    """The non-resident applicant's agent, when one is named (permit:B(1))."""
    if raw is None:
        return None
    v = r.fields(raw, schema.AGENT.name, schema.AGENT.fields)
    if any(v[k] is None for k in ("name", "address", "county")):
        return None
    return Agent(v["name"], v["address"], v["county"], v["natural_person"])


def check_revocation(r: Reader, revoked_at: datetime | None) -> None:
    """When the Board revoked the permit (permit:G): an instant, so with its offset."""
    if revoked_at is not None and revoked_at.tzinfo is None:
        r.problem(
            "permit.revoked_at",
            "needs an offset, e.g. 2027-07-04T15:00:00-04:00",
            schema.CITE_REVOCATION,
        )
    elif revoked_at is not None and (problem := instant_problem(revoked_at)):
        r.problem("permit.revoked_at", problem, schema.CITE_REVOCATION)


def read_application(r: Reader) -> tuple[dict[str, bool | None], bool]:
    """``[application]``: each statement filed, not filed, or not on record (permit:B).

    Returns the statements and whether the file holds the table at all.
    """
    v = r.read(schema.APPLICATION)
    return {st.key: v[st.key] for st in schema.STATEMENTS}, "application" in r.data


def new_york_offset_problem(value: datetime) -> str | None:
    """What is wrong with a local time's offset in New York, or None if it is New York's.

    The time as written must be the time New York's clocks show at that instant: a
    window written ``10:00-04:00`` on a day New York is at -05:00 would move the
    permitted hours an hour (docs/law.md, "Kent's clock").
    """
    wall = value.replace(tzinfo=None)
    if value.astimezone(KENT).replace(tzinfo=None) == wall:
        return None
    day = wall.date().isoformat()
    expected = wall.replace(tzinfo=KENT).utcoffset()
    if expected is not None and expected != value.utcoffset():
        return f"New York is at {_offset(expected)} on {day}"
    return (
        f"{wall.time().isoformat()} does not exist in New York on {day} "
        "(the clocks go forward an hour)"
    )


def _offset(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def read_windows(r: Reader) -> tuple[Window, ...]:
    """The permitted windows, in order: each with New York's offsets, ending after it
    starts, apart."""
    windows: list[Window] = []
    for i, w in r.read_list(schema.WINDOWS):
        name = f"windows[{i}]"
        start, end = w["start"], w["end"]
        bad = False
        for label, value in ((f"{name}.start", start), (f"{name}.end", end)):
            if value is not None and value.tzinfo is None:
                r.problem(label, "needs an offset, e.g. 2027-07-04T10:00:00-04:00")
                bad = True
            elif value is not None and (problem := instant_problem(value)):
                r.problem(label, problem)
                bad = True
            elif value is not None and (wrong := new_york_offset_problem(value)) is not None:
                r.problem(label, wrong)
                bad = True
        if start is None or end is None or bad:
            continue
        if end <= start:
            r.problem(f"{name}.end", "must be after its start", schema.CITE_DECLARED)
            continue
        windows.append(Window(start, end))
    ordered = sorted(windows, key=lambda w: w.start)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end:
            r.problem("[[windows]]", f"windows overlap at {b.start.isoformat()}")
    return tuple(ordered)


def check_limits(r: Reader, max_one: int | None, max_coll: int | None) -> None:
    """The collective maximum cannot be below the maximum at one time (permit:B(2))."""
    if max_one is not None and max_coll is not None and max_coll < max_one:
        r.problem(
            "limits.max_collective",
            f"({max_coll}) cannot be less than max_at_one_time ({max_one})",
            schema.CITE_DECLARED,
        )


def read_alerting(r: Reader, max_one: int | None) -> Alerting | None:
    """``[alerting]``: hold at or below the permitted maximum, resume at or below hold."""
    v = r.read(schema.ALERTING)
    hold_at = v["hold_at"]
    if hold_at is ABSENT:
        hold_at = max_one or 0
    if hold_at is not None and max_one is not None and hold_at > max_one:
        r.problem(
            "alerting.hold_at",
            f"({hold_at}) must not exceed limits.max_at_one_time ({max_one})",
            schema.CITE_DECLARED,
        )
    resume = v["resume_below"]
    if resume is ABSENT:
        resume = int(hold_at * 0.99) if hold_at else 0
    if resume is not None and hold_at is not None and resume > hold_at:
        r.problem("alerting.resume_below", f"({resume}) must not exceed hold_at ({hold_at})")
    if any(x is None for x in (v["pending_s"], v["clear_s"], v["stale_after_s"], hold_at, resume)):
        return None
    return Alerting(
        pending_s=float(v["pending_s"]),
        clear_s=float(v["clear_s"]),
        stale_after_s=float(v["stale_after_s"]),
        hold_at=hold_at,
        resume_below=resume,
    )


def read_signing(r: Reader, source: Path | str | None) -> Path | None:
    """``[signing] keys_file``, relative to the permit file's folder."""
    keys_raw = r.read(schema.SIGNING)["keys_file"]
    if not keys_raw:
        return None
    keys_file = Path(keys_raw)
    if not keys_file.is_absolute() and isinstance(source, Path):
        keys_file = source.parent / keys_file
    return keys_file
