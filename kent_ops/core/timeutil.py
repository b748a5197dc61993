"""Exact instants for the core: whole microseconds since the Unix epoch, UTC.

The engine compares and adds instants on every message; integers are exact (no float
drift between a live run and its replay) and fast. Aware datetimes come in and go out
only at the engine's face.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["EARLIEST", "LATEST", "SECOND", "from_us", "instant_problem", "iso", "seconds", "to_us"]

SECOND = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EARLIEST = _EPOCH
"""The first instant kent-ops holds: a device whose clock was reset still reads after it."""
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
"""The first instant kent-ops no longer holds. Python's dates end in 9999 and the
report's time series (nanoseconds since 1970, 64 bits) in 2262: well before either,
adding any period the permit or the law names (a day, five days of clean-up, a
delay of hours) cannot overflow, and subtracting one from :data:`EARLIEST` cannot either."""
_ONE_US = timedelta(microseconds=1)


def to_us(t: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch."""
    return (t - _EPOCH) // _ONE_US


def from_us(us: int) -> datetime:
    """Microseconds since the epoch as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=us)


def instant_problem(t: datetime) -> str | None:
    """Why an aware instant lies outside what kent-ops holds, or None if it is inside.

    docs/protocol.md ("Times") states the range. A sensor, a person or a permit that
    names an instant outside it is refused with this reason, never taken: the engine
    and the report then hold every instant they were given.
    """
    if EARLIEST <= t < LATEST:
        return None
    return (
        f"{t.isoformat()} is outside the years kent-ops holds "
        f"({EARLIEST.year} to {LATEST.year - 1}, UTC)"
    )


def iso(us: int | None) -> str | None:
    """ISO 8601 in UTC with its offset, as the status and alerts carry it."""
    if us is None:
        return None
    return from_us(us).isoformat()


def seconds(s: float) -> int:
    """A duration in seconds as microseconds."""
    return round(s * SECOND)
