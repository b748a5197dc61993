"""The top of an inspector's screen: the permit's standing, the order, staffing against
what is required, and why attendance may read low.

The terminal's dashboard and the inspector's page in a browser show these from the
same functions, as tagged text (:mod:`kent_ops.core.tagged`): the figures, the limits
and how each reads (amber within 10% of its limit, red past it) are decided here once;
the screens lay them out. Every figure and limit comes from the aggregator's status
(docs/protocol.md); nothing is counted or judged here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kent_ops.core import wire
from kent_ops.core.counting import cars_exceed_persons
from kent_ops.core.display import Level, clean, event_zone, fmt_int, level, local_clock
from kent_ops.core.tagged import Line, Span, Tag

__all__ = [
    "ID_CHARS",
    "NAME_CHARS",
    "PropertyLine",
    "StaffingLine",
    "assembly_text",
    "attendance_flags",
    "compliance_title",
    "order_word",
    "outside_hours",
    "permit_alarm",
    "permit_words",
    "property_lines",
    "staffing_lines",
]

ID_CHARS = 32
"""An id from the wire is cut to this many characters in a line (a line stays a line)."""
NAME_CHARS = 24
"""A property or its owner is cut to this many characters: a table shares its column."""

LEVEL_TAG: dict[Level, Tag] = {"ok": "", "near": "warn", "breach": "alarm"}
"""How a figure reads at each level: plain, amber within 10% of its limit, red past it."""


def order_word(status: wire.Status) -> str:
    """``ADMIT`` or ``HOLD``: the aggregator's event-wide order (docs/protocol.md)."""
    return "ADMIT" if status.admit else "HOLD"


def permit_words(status: wire.Status) -> Line:
    """The permit's number and its status: ``MG-2027-003 issued`` (green), else red."""
    number = clean(status.permit.number, limit=ID_CHARS) or "no permit number"
    state = clean(status.permit.status, limit=ID_CHARS) or "unknown"
    return (Span(f"{number} "), Span(state, "good-strong" if state == "issued" else "alarm"))


def outside_hours(status: wire.Status) -> Span | None:
    """``outside permitted hours`` while no window is open: amber while the assembly is
    on (people are there), dim otherwise; None inside a window."""
    if status.window.inside:
        return None
    return Span("outside permitted hours", "warn" if status.assembly.on else "dim")


def permit_alarm(status: wire.Status | None) -> Line | None:
    """One line when the permit is not issued (revoked, pending, denied, none); else None.

    A revoked permit names when it took effect and the Board's resolution: that is what
    an inspector cites to the organiser.
    """
    if status is None or status.permit.status == "issued":
        return None
    permit = status.permit
    number = clean(permit.number, limit=ID_CHARS) or "(no number)"
    state = clean(permit.status, limit=ID_CHARS) or "unknown"
    spans = []
    if state == "revoked":
        spans.append(Span(f" PERMIT {number} REVOKED ", "banner"))
    else:
        spans.append(Span(f" NO ISSUED PERMIT: {number} is {state} ", "banner"))
    if permit.since is not None:
        spans.append(
            Span(f" since {local_clock(permit.since, event_zone(status), with_zone=True)}")
        )
    if permit.resolution:
        spans.append(Span(" · resolution "))
        spans.append(Span(clean(permit.resolution, limit=60), "strong"))
    spans.append(Span(" · HOLD from 500 persons (permit:A, G)", "alarm"))
    return tuple(spans)


def assembly_text(status: wire.Status) -> str:
    """``assembly on`` or ``assembly off``: whether the duties that bind the assembly
    (doctor, nurses, parking, housing: docs/law.md, "When the assembly is on") hold now."""
    return "assembly on" if status.assembly.on else "assembly off"


def compliance_title(status: wire.Status | None) -> str:
    """Staffing's title says whether its duties bind now: they bind the assembly
    (doctor, nurses, parking, docs/law.md), so only while it is on."""
    if status is None:
        return "Staffing & parking"
    return f"Staffing & parking · {assembly_text(status)}"


# -- staffing and parking ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StaffingLine:
    """One figure against what is required (or allowed): ``Nurses 4 of 7 required``."""

    label: str
    have: int
    need: int
    word: str
    """The word after ``of {need}``: required, declared, allowed ('' for entries)."""
    kind: Literal["min", "max", "exits"]
    """How it is judged: a minimum, a maximum, or not at all (entries beside exits)."""
    level: Level

    @property
    def tag(self) -> Tag:
        return LEVEL_TAG[self.level]

    def limit(self, *, words: bool = True) -> str:
        """``of 7 required`` (or ``of 7`` where there is no room); entries: ``exits 12``."""
        if self.kind == "exits":
            return f"exits {fmt_int(self.need)}"
        return f"of {fmt_int(self.need)} {self.word}" if words else f"of {fmt_int(self.need)}"


def _line(label: str, have: int, need: int, word: str, kind: Literal["min", "max"]) -> StaffingLine:
    # A minimum is a limit on the demand: judge what is required against what is there.
    judged = level(need, have) if kind == "min" else level(have, need)
    return StaffingLine(label, have, need, word, kind, judged)


def staffing_lines(status: wire.Status) -> list[StaffingLine]:
    """Doctors, nurses, security, car spaces and cars against the permit, then entries."""
    medical, security, parking = status.medical, status.security, status.parking
    att = status.attendance
    doubt = "?" if medical.uncertain else ""  # a staff station's roster unknown now
    lines = [
        _line(
            f"Doctors{doubt}", medical.doctors_on_duty, medical.doctors_required, "required", "min"
        ),  # fmt: skip
        _line(
            f"Nurses{doubt}", medical.nurses_on_duty, medical.nurses_required, "required", "min"
        ),  # fmt: skip
        _line("Security", security.on_duty, security.declared, "declared", "min"),
        _line("Car spaces", parking.spaces_provided, parking.spaces_required, "required", "min"),
        _line("Cars", parking.occupied, parking.vehicles_at_one_time, "allowed", "max"),
    ]
    if att.max_collective > 0:  # a permit always sets it; 0 is an aggregator that did not say
        lines.append(_line("Entries", att.entries, att.max_collective, "allowed", "max"))
    else:
        lines.append(StaffingLine("Entries", att.entries, att.exits, "", "exits", "ok"))
    return lines


# -- attendance ---------------------------------------------------------------------------


def attendance_flags(status: wire.Status) -> Line:
    """Why attendance may be low (a counter down, more cars parked than persons counted)
    and the last inspector's adjustment."""
    spans: list[Span] = []
    if status.attendance.uncertain:
        down = [clean(gate, limit=32) for gate, g in sorted(status.gates.items()) if g.down()]
        causes = [f"{', '.join(down)} down"] if down else []
        for gate, g in sorted(status.gates.items()):  # heard, yet in doubt
            sensor = status.sensors.get(gate)
            if not g.down() and not g.manual and sensor is not None and sensor.doubt:
                causes.append(f"{clean(gate, limit=32)} {sensor.doubt}")
        if _cars_exceed(status):
            causes.append("more cars parked than persons counted")
        which = f": {'; '.join(causes)}" if causes else ": a counter is down or stale"
        spans.append(Span(f"UNCERTAIN{which}", "warn"))
    if status.adjustments:
        last = status.adjustments[-1]
        if spans:
            spans.append(Span(" · "))
        spans.append(
            Span(
                f"adjusted to {fmt_int(last.attendance)} (offset {last.offset:+,}) "
                f"by {clean(last.by)} at {local_clock(last.at, event_zone(status))}",
                "italic",
            )
        )
    if not spans:
        spans.append(Span("all gate counters reporting", "dim"))
    return tuple(spans)


def _cars_exceed(status: wire.Status) -> bool:
    """The lots contradict the gates (the aggregator's cross-check, core/counting.py)."""
    medical = status.medical
    staff = medical.doctors_on_duty + medical.nurses_on_duty + status.security.on_duty
    return cars_exceed_persons(status.parking.occupied, status.attendance.current, staff)


# -- properties ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PropertyLine:
    """One property of the assembly: its id, its owner and the persons on it."""

    key: str
    name: str
    owner: str
    persons: str


def property_lines(status: wire.Status | None) -> list[PropertyLine]:
    """A line per property (persons on it through its gates, and its owner), in the
    permit's order; none when the assembly is on one property (its total is attendance)."""
    if status is None or len(status.properties) < 2:
        return []
    return [
        PropertyLine(
            prop_id,
            clean(prop_id, limit=NAME_CHARS),
            clean(prop.owner, limit=NAME_CHARS),
            fmt_int(prop.attendance),
        )
        for prop_id, prop in status.properties.items()
    ]
