"""What a scenario is, once read: crowd phases, a surge, parking, staff shifts, faults.

The file format and its validation are in :mod:`sensors.scenario.file`; this module
holds the validated values and the one piece of arithmetic they carry, the times of a
schedule (:class:`TimeExpr`): ``"2:30"``, ``"40%"``, ``"end"``, the permit's alerting
times ``pending``, ``clear``, ``stale``, and sums and differences of these.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kent_ops.core.permit import Permit

__all__ = [
    "BUILTIN_SCENARIOS",
    "FAULT_KINDS",
    "MALFORMED_KINDS",
    "PERMIT_COUNT",
    "UNITS",
    "Fault",
    "Parking",
    "Phase",
    "Scenario",
    "ScenarioError",
    "Shift",
    "Surge",
    "TimeExpr",
]

BUILTIN_SCENARIOS = ("festival", "quiet", "faults")
UNITS = ("max_at_one_time", "persons")
FAULT_KINDS = ("restart", "offline", "duplicates", "malformed")
MALFORMED_KINDS = ("bad-json", "negative-count", "wrong-type", "unknown-sensor", "oversize")

_TERM = re.compile(
    r"\s*([+-])?\s*(?:(\d+(?:\.\d+)?)%|(\d+):(\d{1,2})(?::(\d{1,2}))?|(end|pending|clear|stale))\s*"
)
PERMIT_COUNT = re.compile(r"^permit\s*(?:([+-])\s*(\d+))?$")


class ScenarioError(ValueError):
    """A scenario that cannot be used; ``problems`` lists every reason."""

    def __init__(self, problems: list[str], source: str = "scenario") -> None:
        self.problems = problems
        self.source = source
        super().__init__(f"{source} is invalid: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class TimeExpr:
    """A time in the scenario's schedule: a sum of terms (see the module docstring)."""

    text: str
    terms: tuple[tuple[int, str, float], ...]  # (sign, "share"|"seconds"|name, value)

    @classmethod
    def parse(cls, text: str) -> TimeExpr:
        """Parse ``"37% + 0:20 + pending"``; raise ValueError naming what is wrong."""
        terms: list[tuple[int, str, float]] = []
        pos = 0
        while pos < len(text):
            m = _TERM.match(text, pos)
            if m is None or m.end() == pos:
                raise ValueError(f"cannot read {text!r} as a time (e.g. '2:30', '40%', 'end')")
            sign_text, share, hours, minutes, seconds, name = m.groups()
            if terms and sign_text is None:
                raise ValueError(f"{text!r}: join terms with + or -")
            sign = -1 if sign_text == "-" else 1
            if share is not None:
                terms.append((sign, "share", float(share) / 100))
            elif hours is not None:
                if int(minutes) >= 60 or (seconds is not None and int(seconds) >= 60):
                    raise ValueError(f"{text!r}: minutes and seconds must be under 60")
                total = int(hours) * 3600 + int(minutes) * 60 + int(seconds or 0)
                terms.append((sign, "seconds", float(total)))
            else:
                terms.append((sign, name, 1.0))
            pos = m.end()
        if not terms:
            raise ValueError("a time must not be empty")
        return cls(text, tuple(terms))

    def seconds(self, span_s: float, permit: Permit) -> float:
        """Seconds after the scenario's 0:00, for a span of ``span_s`` and this permit."""
        al = permit.alerting
        named = {"pending": al.pending_s, "clear": al.clear_s, "stale": al.stale_after_s}
        total = 0.0
        for sign, kind, value in self.terms:
            if kind == "share":
                total += sign * value * span_s
            elif kind == "seconds":
                total += sign * value
            elif kind == "end":
                total += sign * span_s
            else:
                total += sign * named[kind]
        return total


@dataclass(frozen=True, slots=True)
class Phase:
    """A stretch of the day: how many arrive during it and how fast those present leave.

    ``arrive`` is the number arriving over the whole phase, spread evenly (Poisson), in
    the scenario's units. ``leave_per_hour`` is the share of those present who leave
    per hour. ``empty`` drains everyone present, evenly, by the phase's end.
    """

    name: str
    start: TimeExpr
    end: TimeExpr
    arrive: float
    leave_per_hour: float
    empty: bool


@dataclass(frozen=True, slots=True)
class Surge:
    """A sold-out rush: attendance driven to ``peak`` over ``ramp`` and held for ``hold``."""

    at: TimeExpr
    ramp: TimeExpr
    hold: TimeExpr
    peak: float


@dataclass(frozen=True, slots=True)
class Parking:
    """Cars park ``lead`` ahead of their passengers and leave ``exit_lag`` after them."""

    persons_per_car: float = 3.0
    lead: TimeExpr = TimeExpr("0:06", ((1, "seconds", 360.0),))
    exit_lag: TimeExpr = TimeExpr("0:04", ((1, "seconds", 240.0),))


@dataclass(frozen=True, slots=True)
class Shift:
    """Staff of one role badging on (and maybe off) at a station.

    ``count`` is a number or ``"permit"`` (``"permit+1"``, ``"permit-2"``): as many as
    the permit asks at its maximum attendance (nurses for max_at_one_time at its ratio,
    doctors_min doctors, the declared security guards). Each scans within ``spread``
    after ``on`` (and ``off``, if given; without it they stay to the end).
    """

    role: str
    count: int | str
    on: TimeExpr
    off: TimeExpr | None
    spread: TimeExpr
    station: str | int | None

    def headcount(self, permit: Permit) -> int:
        """The number of staff in this shift for ``permit``."""
        if isinstance(self.count, int):
            return self.count
        m = PERMIT_COUNT.match(self.count.strip())
        assert m is not None  # checked when loaded
        if self.role == "nurse":
            base = math.ceil(permit.max_at_one_time / permit.persons_per_nurse)
        elif self.role == "doctor":
            base = permit.doctors_min
        else:
            base = permit.security_guards
        delta = int(m.group(2) or 0) * (-1 if m.group(1) == "-" else 1)
        return max(0, base + delta)


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected fault: a counter restart, an outage, duplicates or malformed messages.

    ``gate`` is a gate id, or a 1-based index into the permit's automatic (not manual)
    gates, wrapping around. ``duration`` is the outage's length; ``copies`` how many
    duplicates; ``what`` which malformed messages (see ``MALFORMED_KINDS``).
    """

    kind: str
    at: TimeExpr
    gate: str | int = 1
    duration: TimeExpr | None = None
    copies: int = 5
    what: tuple[str, ...] = MALFORMED_KINDS


@dataclass(frozen=True, slots=True)
class Scenario:
    """One scenario, validated."""

    name: str
    description: str
    span: TimeExpr | None  # None: the permit's first window
    setup: TimeExpr
    step_s: float
    heartbeat_s: float
    units: str
    gate_weights: dict[str, float]
    phases: tuple[Phase, ...]
    surge: Surge | None
    parking: Parking
    shifts: tuple[Shift, ...]
    faults: tuple[Fault, ...]
    source: str = ""

    def unit(self, permit: Permit) -> float:
        """Persons per unit of ``arrive`` and ``peak``."""
        return float(permit.max_at_one_time) if self.units == "max_at_one_time" else 1.0
