"""Exact instants for the core: whole microseconds since the Unix epoch, UTC.

The engine compares and adds instants on every message; integers are exact (no float
drift between a live run and its replay) and fast. Aware datetimes come in and go out
only at the engine's face.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["SECOND", "from_us", "iso", "seconds", "to_us"]

SECOND = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)


def to_us(t: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch."""
    return (t - _EPOCH) // _ONE_US


def from_us(us: int) -> datetime:
    """Microseconds since the epoch as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=us)


def iso(us: int | None) -> str | None:
    """ISO 8601 in UTC with its offset, as the status and alerts carry it."""
    if us is None:
        return None
    return from_us(us).isoformat()


def seconds(s: float) -> int:
    """A duration in seconds as microseconds."""
    return round(s * SECOND)
