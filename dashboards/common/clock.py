"""The dashboards' notion of "now", injectable so tests and snapshots repeat.

The status age (stale after 15 s; the aggregator publishes one at least every 5 s,
docs/protocol.md) and the event's local time on screen both depend on the clock;
tests pass a fixed one instead of patching the system time.

An aggregator that runs on its sensors' clock (the demo, a simulation: its status says
``"clock": "sensor"``, docs/protocol.md) keeps a time that is not the wall clock's. A
screen beside it shows that time, not its own, and a tally stamps its counts with it,
so every screen and device of a demo runs on one clock: :class:`FollowingClock`, which
reads it with the core's one rule (:func:`kent_ops.core.aggregator_time.sensor_time`),
as the web server's gate hubs and the notifier do.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from kent_ops.core import wire
from kent_ops.core.aggregator_time import sensor_time

__all__ = ["Clock", "FollowingClock", "fixed_clock", "following", "wall_clock"]

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


class FollowingClock:
    """ "Now" for a screen: ``base``, or the aggregator's own time while it runs on its
    sensors' clock.

    A status whose ``clock`` is ``sensor`` carries the simulation's time in ``ts``; from
    then on this clock reads the newest such ``ts`` (it stands still when the simulated
    day ends, as the day does). ``follow=False`` keeps ``base`` whatever the status says:
    a test's fixed clock, or a caller that injected its own "now".
    """

    def __init__(self, base: Clock = wall_clock, *, follow: bool = True) -> None:
        self.base = base
        self.follow = follow
        self.followed: datetime | None = None
        """The newest ``ts`` of a status on the sensors' clock; None on the wall clock."""

    def __call__(self) -> datetime:
        return self.followed if self.followed is not None else self.base()

    def saw(self, status: wire.Status) -> None:
        """Take a status's time when its aggregator runs on its sensors' clock."""
        if not self.follow:
            return
        if status.clock != "sensor":
            self.followed = None
            return
        ts = sensor_time(status)
        if ts is not None and (self.followed is None or ts > self.followed):
            self.followed = ts


def following(clock: Clock | None) -> FollowingClock:
    """A screen's clock from what its caller gave: a following clock as it is; none, the
    wall clock that follows an aggregator on its sensors' clock; any other (a test's
    fixed clock), kept whatever the status says."""
    if isinstance(clock, FollowingClock):
        return clock
    return FollowingClock(clock or wall_clock, follow=clock is None)
