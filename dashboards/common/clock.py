"""The dashboards' notion of "now", injectable so tests and snapshots repeat.

The status age (stale after 15 s; the aggregator publishes one at least every 5 s,
docs/protocol.md) and the event's local time on screen both depend on the clock;
tests pass a fixed one instead of patching the system time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

__all__ = ["Clock", "fixed_clock", "wall_clock"]

Clock = Callable[[], datetime]
"""A function returning the current time, timezone-aware."""


def wall_clock() -> datetime:
    """The real time, in UTC."""
    return datetime.now(UTC)


def fixed_clock(moment: datetime) -> Clock:
    """A clock stopped at ``moment``: for snapshot tests and the benchmark."""
    if moment.tzinfo is None:
        raise ValueError("a fixed clock needs a timezone-aware moment")

    def clock() -> datetime:
        return moment

    return clock
