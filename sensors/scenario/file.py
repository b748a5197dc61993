"""A scenario is data: a small TOML file of crowd phases, staff shifts and faults.

The built-in ones (``festival``, ``quiet``, ``faults``) live in ``sensors/scenario/builtin/``;
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

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from kent_ops.core.wire import ROLES
from sensors.scenario.model import (
    BUILTIN_SCENARIOS,
    FAULT_KINDS,
    MALFORMED_KINDS,
    PERMIT_COUNT,
    UNITS,
    Fault,
    Parking,
    Phase,
    Scenario,
    ScenarioError,
    Shift,
    Surge,
    TimeExpr,
)

__all__ = ["load_scenario", "parse_scenario"]


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A built-in scenario by name, or a scenario file; raise ScenarioError."""
    text_name = str(name_or_path)
    if text_name in BUILTIN_SCENARIOS:
        text = (
            resources.files("sensors.scenario.builtin")
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

    def choice(
        self, table: dict[str, Any], path: str, choices: tuple[str, ...], default: Any = ...
    ) -> str | None:
        """A string that must be one of ``choices``."""
        value = self.get(table, path, (str,), default)
        if value is not None and value not in choices:
            self.problems.append(f"{path}: must be one of {', '.join(choices)}, not {value!r}")
            return None
        return value

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
    head = _read_head(r, r.table(data, "scenario"), Path(source).stem)
    crowd = r.table(data, "crowd")
    # crowd.manual_share, from older files, is accepted and ignored: manual tally gates
    # are the deputies' and no scenario sends persons through them.
    gate_weights = _read_gate_weights(r, r.table(crowd, "crowd.gate_weights"))
    phases = [_read_phase(r, t, i) for i, t in enumerate(r.tables(crowd, "crowd.phases"))]
    surge = _read_surge(r, r.table(crowd, "crowd.surge")) if "surge" in crowd else None
    parking = _read_parking(r, r.table(data, "parking"))
    shifts = [_read_shift(r, t, f"shifts[{i}]") for i, t in enumerate(r.tables(data, "shifts"))]
    faults = [_read_fault(r, t, f"faults[{i}]") for i, t in enumerate(r.tables(data, "faults"))]
    if r.problems:
        raise ScenarioError(r.problems, source)
    return Scenario(
        **head,
        gate_weights=gate_weights,
        phases=tuple(p for p in phases if p is not None),
        surge=surge,
        parking=parking,
        shifts=tuple(s for s in shifts if s is not None),
        faults=tuple(f for f in faults if f is not None),
        source=source,
    )


# -- one reader per table: each adds its problems to the reader and returns None if any --


def _read_head(r: _Reader, head: dict[str, Any], stem: str) -> dict[str, Any]:
    """``[scenario]``: its name, span, set-up time, step, heartbeat and units."""
    name = r.get(head, "scenario.name", (str,), stem)
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
    units = r.choice(head, "scenario.units", UNITS, "max_at_one_time")
    return {
        "name": name,
        "description": description,
        "span": span,
        "setup": setup,
        "step_s": step_s,
        "heartbeat_s": heartbeat_s,
        "units": units,
    }


def _read_gate_weights(r: _Reader, weights: dict[str, Any]) -> dict[str, float]:
    """``[crowd.gate_weights]``: a weight per gate id; gates not named weigh 1.

    A weight for a manual tally gate, or a gate the permit does not list, is accepted
    (a scenario fits any permit) and changes nothing.
    """
    read = {gate: r.number(weights, f"crowd.gate_weights.{gate}") for gate in weights}
    return {gate: w for gate, w in read.items() if w is not None}


def _read_phase(r: _Reader, phase: dict[str, Any], i: int) -> Phase | None:
    """``[[crowd.phases]]``: a stretch of the day, its arrivals and its departures."""
    p = f"crowd.phases[{i}]"
    start = r.time(phase, f"{p}.from")
    end = r.time(phase, f"{p}.to")
    arrive = r.number(phase, f"{p}.arrive", 0)
    leave = r.number(phase, f"{p}.leave_per_hour", 0)
    empty = r.get(phase, f"{p}.empty", (bool,), False)
    name = r.get(phase, f"{p}.name", (str,), f"phase {i + 1}")
    if start is None or end is None or arrive is None or leave is None:
        return None
    if empty is None or name is None:
        return None
    return Phase(name=name, start=start, end=end, arrive=arrive, leave_per_hour=leave, empty=empty)


def _read_surge(r: _Reader, surge: dict[str, Any]) -> Surge | None:
    """``[crowd.surge]``: a rush to ``peak`` over ``ramp``, held for ``hold``."""
    at = r.time(surge, "crowd.surge.at")
    ramp = r.time(surge, "crowd.surge.ramp", "0:10")
    hold = r.time(surge, "crowd.surge.hold", "0:10")
    peak = r.number(surge, "crowd.surge.peak", positive=True)
    if at is None or ramp is None or hold is None or peak is None:
        return None
    return Surge(at=at, ramp=ramp, hold=hold, peak=peak)


def _read_parking(r: _Reader, parking: dict[str, Any]) -> Parking:
    """``[parking]``: persons per car, and how far cars run ahead of and behind them."""
    per_car = r.number(parking, "parking.persons_per_car", 3.0, positive=True)
    lead = r.time(parking, "parking.lead", "0:06")
    lag = r.time(parking, "parking.exit_lag", "0:04")
    default = Parking()
    return Parking(
        per_car or default.persons_per_car, lead or default.lead, lag or default.exit_lag
    )


def _read_shift(r: _Reader, shift: dict[str, Any], p: str) -> Shift | None:
    """``[[shifts]]``: staff of one role badging on (and maybe off) at a station."""
    role = r.choice(shift, f"{p}.role", ROLES)
    count = r.get(shift, f"{p}.count", (int, str))
    if isinstance(count, int) and count < 0:
        r.problems.append(f"{p}.count: must be at least 0")
        count = None
    elif isinstance(count, str) and not PERMIT_COUNT.match(count.strip()):
        r.problems.append(f"{p}.count: must be a number or 'permit', 'permit+N', 'permit-N'")
        count = None
    on = r.time(shift, f"{p}.on")
    off = r.time(shift, f"{p}.off", None)
    spread = r.time(shift, f"{p}.spread", "0:01")
    station = r.get(shift, f"{p}.station", (str, int), None)
    if role is None or count is None or on is None or spread is None:
        return None
    return Shift(role=role, count=count, on=on, off=off, spread=spread, station=station)


def _read_fault(r: _Reader, fault: dict[str, Any], p: str) -> Fault | None:
    """``[[faults]]``: one injected fault on one automatic gate."""
    kind = r.choice(fault, f"{p}.kind", FAULT_KINDS)
    at = r.time(fault, f"{p}.at")
    gate = r.get(fault, f"{p}.gate", (str, int), 1)
    if isinstance(gate, int) and gate < 1:
        r.problems.append(f"{p}.gate: a gate number counts from 1")
        gate = None
    duration = r.time(fault, f"{p}.duration", "0:10" if kind == "offline" else None)
    copies = r.get(fault, f"{p}.copies", (int,), 5)
    if isinstance(copies, int) and copies < 1:
        r.problems.append(f"{p}.copies: must be at least 1")
        copies = None
    what = r.get(fault, f"{p}.what", (list,), list(MALFORMED_KINDS))
    if what is not None:
        bad = [w for w in what if w not in MALFORMED_KINDS]
        if bad:
            r.problems.append(f"{p}.what: {bad!r} not among {', '.join(MALFORMED_KINDS)}")
            what = None
    if kind is None or at is None or gate is None or copies is None or what is None:
        return None
    return Fault(kind=kind, at=at, gate=gate, duration=duration, copies=copies, what=tuple(what))
