"""Where a simulated run sits in time, and the steps it is cut into.

A scenario's times are written against its own 0:00 (see :mod:`sensors.scenario.file`);
:func:`timeline` lays them over real dates, and :class:`Schedule` turns them into
seconds and step numbers for the crowd model and the scheduled events. Every random
draw of a run comes from :meth:`Schedule.rng`, one stream per purpose, so the crowd,
the parking and the staff never disturb each other's draws.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from kent_ops.core.permit import Permit
from sensors.scenario.model import Scenario, TimeExpr

__all__ = ["Schedule", "Timeline", "timeline"]


@dataclass(frozen=True, slots=True)
class Timeline:
    """Where a run sits in time: setup ``begin``, the scenario's 0:00 ``zero``, its ``end``."""

    begin: datetime
    zero: datetime
    end: datetime
    span_s: float

    def at(self, offset_s: float) -> datetime:
        return self.zero + timedelta(seconds=offset_s)


def timeline(permit: Permit, scenario: Scenario, start: datetime | None = None) -> Timeline:
    """The run's bounds: 0:00 is ``start`` (default: the first window opens)."""
    window = permit.windows[0]
    zero = start if start is not None else window.start
    if zero.tzinfo is None:
        raise ValueError("start must be timezone-aware")
    window_s = (window.end - window.start).total_seconds()
    span_s = window_s if scenario.span is None else scenario.span.seconds(window_s, permit)
    if span_s <= 0:
        raise ValueError(f"scenario {scenario.name!r} has a span of {span_s:g} s")
    setup_s = max(0.0, scenario.setup.seconds(span_s, permit))
    return Timeline(
        begin=zero - timedelta(seconds=setup_s),
        zero=zero,
        end=zero + timedelta(seconds=span_s),
        span_s=span_s,
    )


@dataclass(frozen=True, slots=True)
class Schedule:
    """A run cut into steps of ``step`` seconds, from setup to the scenario's end.

    The steps always cover the whole scenario, even when a run is cut short, so the
    crowd (and everything downstream of it) does not depend on the run's duration.
    """

    permit: Permit
    scenario: Scenario
    seed: int
    timeline: Timeline

    @property
    def step(self) -> float:
        return self.scenario.step_s

    @property
    def setup_s(self) -> float:
        return (self.timeline.zero - self.timeline.begin).total_seconds()

    @property
    def n_steps(self) -> int:
        return math.ceil((self.setup_s + self.timeline.span_s) / self.step)

    def offset(self, k: int) -> float:
        """Seconds after 0:00 at which step ``k`` begins (negative during setup)."""
        return k * self.step - self.setup_s

    def secs(self, expr: TimeExpr) -> float:
        """A scenario time in seconds after 0:00, for this run's span and permit."""
        return expr.seconds(self.timeline.span_s, self.permit)

    def steps(self, expr: TimeExpr) -> int:
        """A scenario duration in whole steps, rounded."""
        return round(self.secs(expr) / self.step)

    def rng(self, purpose: str) -> random.Random:
        """The run's random stream for one purpose; the same seed gives the same draws."""
        return random.Random(f"kent-ops:{self.seed}:{self.scenario.name}:{purpose}")
