"""A scenario is data: a small TOML file of crowd phases, staff shifts and faults.

The built-in ones (``festival``, ``quiet``, ``faults``) live in ``sensors/scenarios/``;
a town writes its own the same way (``examples/scenario.toml`` explains every key).
Nothing here names a gate or a lot: the generator lays the scenario over a permit's
gates, lots and staff stations, so one scenario fits any permit.

Times are strings, so they read like a schedule and scale with the event:

- ``"2:30"`` or ``"2:30:15"``: hours:minutes(:seconds) after the scenario's 0:00
  (by default the permit's first window opens then);
- ``"40%"``: that share of the scenario's span (by default the first window's length);
- ``"end"`` (= ``"100%"``), and the permit's alerting times ``pending``, ``clear``,
  ``stale`` (in seconds), so a scenario can say "longer than the permit waits";
- sums and differences of these: ``"37% + 0:20 + pending"``, ``"-0:10"``.

Loading validates everything and reports every problem at once, like the permit.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from kent_ops.core.permit import Permit
from kent_ops.core.wire import ROLES

__all__ = [
    "BUILTIN_SCENARIOS",
    "FAULT_KINDS",
    "MALFORMED_KINDS",
    "Fault",
    "Parking",
    "Phase",
    "Scenario",
    "ScenarioError",
    "Shift",
    "Surge",
    "TimeExpr",
    "load_scenario",
    "parse_scenario",
]

BUILTIN_SCENARIOS = ("festival", "quiet", "faults")
UNITS = ("max_at_one_time", "persons")
FAULT_KINDS = ("restart", "offline", "duplicates", "malformed")
MALFORMED_KINDS = ("bad-json", "negative-count", "wrong-type", "unknown-sensor", "oversize")

_TERM = re.compile(
    r"\s*([+-])?\s*(?:(\d+(?:\.\d+)?)%|(\d+):(\d{1,2})(?::(\d{1,2}))?|(end|pending|clear|stale))\s*"
)
_COUNT = re.compile(r"^permit\s*(?:([+-])\s*(\d+))?$")


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
        m = _COUNT.match(self.count.strip())
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
    manual_share: float
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


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A built-in scenario by name, or a scenario file; raise ScenarioError."""
    text_name = str(name_or_path)
    if text_name in BUILTIN_SCENARIOS:
        text = (
            resources.files("sensors.scenarios")
            .joinpath(f"{text_name}.toml")
            .read_text(encoding="utf-8")
        )
        return parse_scenario(text, source=text_name)
    path = Path(name_or_path)
    if not path.is_file():
        raise ScenarioError(
            [
                f"{text_name!r} is neither a built-in scenario "
                f"({', '.join(BUILTIN_SCENARIOS)}) nor a scenario file"
            ],
            text_name,
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([f"cannot read it: {exc}"], text_name) from None
    return parse_scenario(text, source=text_name)


class _Reader:
    """Typed fields out of TOML tables, collecting every problem."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def get(
        self,
        table: dict[str, Any],
        path: str,
        kinds: tuple[type, ...],
        default: Any = ...,
    ) -> Any:
        key = path.rsplit(".", 1)[-1]
        if key not in table:
            if default is ...:
                self.problems.append(f"{path}: missing")
            return None if default is ... else default
        value = table[key]
        if isinstance(value, bool) and bool not in kinds:
            self.problems.append(f"{path}: must not be true/false")
            return None
        if not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            self.problems.append(f"{path}: must be {names}, not {value!r}")
            return None
        return value

    def number(
        self, table: dict[str, Any], path: str, default: Any = ..., *, positive: bool = False
    ) -> float | None:
        value = self.get(table, path, (int, float), default)
        if value is None:
            return None
        if value < 0 or (positive and value == 0):
            self.problems.append(f"{path}: must be {'more than' if positive else 'at least'} 0")
            return None
        return float(value)

    def time(self, table: dict[str, Any], path: str, default: Any = ...) -> TimeExpr | None:
        value = self.get(table, path, (str,), default)
        if value is None or isinstance(value, TimeExpr):
            return value
        try:
            return TimeExpr.parse(value)
        except ValueError as exc:
            self.problems.append(f"{path}: {exc}")
            return None

    def table(self, data: dict[str, Any], path: str) -> dict[str, Any]:
        value = data.get(path.rsplit(".", 1)[-1], {})
        if not isinstance(value, dict):
            self.problems.append(f"[{path}]: must be a table")
            return {}
        return value

    def tables(self, data: dict[str, Any], path: str) -> list[dict[str, Any]]:
        value = data.get(path.rsplit(".", 1)[-1], [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.problems.append(f"[[{path}]]: must be a list of tables")
            return []
        return value


def parse_scenario(text: str, source: str = "scenario") -> Scenario:
    """Validate a scenario's TOML text; raise ScenarioError listing every problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError([f"TOML syntax: {exc}"], source) from None
    r = _Reader()
    head = r.table(data, "scenario")
    name = r.get(head, "scenario.name", (str,), Path(source).stem)
    description = r.get(head, "scenario.description", (str,), "")
    span_text = r.get(head, "scenario.span", (str,), "window")
    span = None
    if span_text is not None and span_text != "window":
        span = r.time(head, "scenario.span")
    setup = r.time(head, "scenario.setup", "0:15")
    step_s = r.number(head, "scenario.step_s", 5, positive=True)
    heartbeat_s = r.number(head, "scenario.heartbeat_s", 30, positive=True)
    if step_s is not None and heartbeat_s is not None and heartbeat_s < step_s:
        r.problems.append("scenario.heartbeat_s: must not be shorter than step_s")
    units = r.get(head, "scenario.units", (str,), "max_at_one_time")
    if units is not None and units not in UNITS:
        r.problems.append(f"scenario.units: must be one of {', '.join(UNITS)}, not {units!r}")

    crowd = r.table(data, "crowd")
    manual_share = r.number(crowd, "crowd.manual_share", 0.05)
    if manual_share is not None and manual_share >= 0.5:
        r.problems.append("crowd.manual_share: must be under 0.5")
    weights_raw = r.table(crowd, "crowd.gate_weights")
    gate_weights: dict[str, float] = {}
    for gate in weights_raw:
        w = r.number(weights_raw, f"crowd.gate_weights.{gate}")
        if w is not None:
            gate_weights[gate] = w
    phases: list[Phase] = []
    for i, ph in enumerate(r.tables(crowd, "crowd.phases")):
        p = f"crowd.phases[{i}]"
        start = r.time(ph, f"{p}.from")
        end = r.time(ph, f"{p}.to")
        arrive = r.number(ph, f"{p}.arrive", 0)
        leave = r.number(ph, f"{p}.leave_per_hour", 0)
        empty = r.get(ph, f"{p}.empty", (bool,), False)
        pname = r.get(ph, f"{p}.name", (str,), f"phase {i + 1}")
        if None not in (start, end, arrive, leave, empty, pname):
            phases.append(Phase(pname, start, end, arrive, leave, empty))  # type: ignore[arg-type]
    surge: Surge | None = None
    if "surge" in crowd:
        sg = r.table(crowd, "crowd.surge")
        at = r.time(sg, "crowd.surge.at")
        ramp = r.time(sg, "crowd.surge.ramp", "0:10")
        hold = r.time(sg, "crowd.surge.hold", "0:10")
        peak = r.number(sg, "crowd.surge.peak", positive=True)
        if None not in (at, ramp, hold, peak):
            surge = Surge(at, ramp, hold, peak)  # type: ignore[arg-type]

    pk = r.table(data, "parking")
    ppc = r.number(pk, "parking.persons_per_car", 3.0, positive=True)
    lead = r.time(pk, "parking.lead", "0:06")
    lag = r.time(pk, "parking.exit_lag", "0:04")
    parking = Parking(ppc or 3.0, lead or Parking().lead, lag or Parking().exit_lag)

    shifts: list[Shift] = []
    for i, sh in enumerate(r.tables(data, "shifts")):
        p = f"shifts[{i}]"
        role = r.get(sh, f"{p}.role", (str,))
        if role is not None and role not in ROLES:
            r.problems.append(f"{p}.role: must be one of {', '.join(ROLES)}, not {role!r}")
            role = None
        count = r.get(sh, f"{p}.count", (int, str))
        if isinstance(count, int) and count < 0:
            r.problems.append(f"{p}.count: must be at least 0")
            count = None
        elif isinstance(count, str) and not _COUNT.match(count.strip()):
            r.problems.append(f"{p}.count: must be a number or 'permit', 'permit+N', 'permit-N'")
            count = None
        on = r.time(sh, f"{p}.on")
        off = r.time(sh, f"{p}.off", None)
        spread = r.time(sh, f"{p}.spread", "0:01")
        station = r.get(sh, f"{p}.station", (str, int), None)
        if None not in (role, count, on, spread):
            shifts.append(Shift(role, count, on, off, spread, station))  # type: ignore[arg-type]

    faults: list[Fault] = []
    for i, ft in enumerate(r.tables(data, "faults")):
        p = f"faults[{i}]"
        kind = r.get(ft, f"{p}.kind", (str,))
        if kind is not None and kind not in FAULT_KINDS:
            r.problems.append(f"{p}.kind: must be one of {', '.join(FAULT_KINDS)}, not {kind!r}")
            kind = None
        at = r.time(ft, f"{p}.at")
        gate = r.get(ft, f"{p}.gate", (str, int), 1)
        if isinstance(gate, int) and gate < 1:
            r.problems.append(f"{p}.gate: a gate number counts from 1")
            gate = None
        duration = r.time(ft, f"{p}.duration", "0:10" if kind == "offline" else None)
        copies = r.get(ft, f"{p}.copies", (int,), 5)
        if isinstance(copies, int) and copies < 1:
            r.problems.append(f"{p}.copies: must be at least 1")
            copies = None
        what = r.get(ft, f"{p}.what", (list,), list(MALFORMED_KINDS))
        if what is not None:
            bad = [w for w in what if w not in MALFORMED_KINDS]
            if bad:
                r.problems.append(f"{p}.what: {bad!r} not among {', '.join(MALFORMED_KINDS)}")
                what = None
        if None not in (kind, at, gate, copies, what):
            faults.append(Fault(kind, at, gate, duration, copies, tuple(what)))  # type: ignore[arg-type]

    if r.problems:
        raise ScenarioError(r.problems, source)
    return Scenario(
        name=name,
        description=description,
        span=span,
        setup=setup,  # type: ignore[arg-type]
        step_s=step_s,  # type: ignore[arg-type]
        heartbeat_s=heartbeat_s,  # type: ignore[arg-type]
        units=units,
        manual_share=manual_share,  # type: ignore[arg-type]
        gate_weights=gate_weights,
        phases=tuple(phases),
        surge=surge,
        parking=parking,
        shifts=tuple(shifts),
        faults=tuple(faults),
        source=source,
    )
