"""The live rules of SPEC 4: which conditions hold, given the counts and the time.

:func:`evaluate` is a pure function of the counting state, the permit's terms and an
instant; it returns every condition that holds, keyed by ``(rule, subject)``, with the
figures observed and required. It knows nothing of pending delays or alert ids: that
is :mod:`kent_ops.core.alerts`. The sentences inspectors read are written here too, next to
the rule they explain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.counting import Counting
from kent_ops.core.permit import Permit
from kent_ops.core.timeutil import to_us

__all__ = ["Condition", "Terms", "evaluate", "message_for"]

Key = tuple[str, str | None]
LOT_FULL_SHARE = 0.95


@dataclass(frozen=True, slots=True)
class Condition:
    """A rule that holds now: what was seen, what the permit requires, how bad it is.

    ``magnitude`` orders observations of the same condition so an alert can keep its
    worst figure (the largest excess or shortfall).
    """

    observed: dict[str, Any]
    required: dict[str, Any]
    magnitude: float


@dataclass(frozen=True, slots=True)
class Terms:
    """The permit's terms, flattened once into the integers the rules compare."""

    issued: bool
    windows: tuple[tuple[int, int], ...]
    max_at_one_time: int
    max_collective: int
    vehicles_at_one_time: int
    persons_per_nurse: int
    doctors_min: int
    security_guards: int
    spaces_provided: int
    housing_declared: bool
    lot_capacity: dict[str, int]

    @classmethod
    def of(cls, permit: Permit) -> Terms:
        return cls(
            issued=permit.status == "issued",
            windows=tuple((to_us(w.start), to_us(w.end)) for w in permit.windows),
            max_at_one_time=permit.max_at_one_time,
            max_collective=permit.max_collective,
            vehicles_at_one_time=permit.vehicles_at_one_time,
            persons_per_nurse=permit.persons_per_nurse,
            doctors_min=permit.doctors_min,
            security_guards=permit.security_guards,
            spaces_provided=permit.spaces_provided,
            housing_declared=permit.housing_declared,
            lot_capacity=dict(permit.lots),
        )

    def inside_window(self, t: int) -> bool:
        return any(start <= t < end for start, end in self.windows)


def evaluate(
    terms: Terms,
    counts: Counting,
    t: int,
    *,
    overnight_from: int | None,
    deficient: dict[str, str],
    skewed: dict[str, float],
    attendance: int | None = None,
) -> dict[Key, Condition]:
    """Every condition that holds at instant ``t``.

    Args:
        terms: the permit's terms.
        counts: the counting state now.
        t: the instant, in microseconds since the epoch.
        overnight_from: the first local midnight since persons have been continuously
            present, or None while nobody is present.
        deficient: checklist items an inspector has marked deficient, with the note.
        skewed: sensors whose clock is off by more than 30 s, with the skew in seconds.
        attendance: evaluate as if this were the attendance (for an alert's worst figure).
    """
    held: dict[Key, Condition] = {}
    if attendance is None:
        attendance = counts.attendance
    entries = counts.entries
    present = max(attendance, 0)
    inside = terms.inside_window(t)
    roster = counts.roster.counts

    if attendance > law.PERMIT_THRESHOLD and (not terms.issued or not inside):
        held[("permit-required", None)] = Condition(
            {"attendance": attendance, "permit_issued": terms.issued, "inside_window": inside},
            {"attendance_at_most": law.PERMIT_THRESHOLD},
            attendance,
        )
    if attendance > terms.max_at_one_time:
        held[("max-at-one-time", None)] = Condition(
            {"attendance": attendance},
            {"attendance_at_most": terms.max_at_one_time},
            attendance - terms.max_at_one_time,
        )
    if entries > terms.max_collective:
        held[("max-collective", None)] = Condition(
            {"entries": entries},
            {"entries_at_most": terms.max_collective},
            entries - terms.max_collective,
        )
    doctors = roster["doctor"]
    if attendance > 0 and doctors < terms.doctors_min:
        held[("doctor-on-duty", None)] = Condition(
            {"doctors_on_duty": doctors, "attendance": attendance},
            {"doctors": terms.doctors_min},
            terms.doctors_min - doctors,
        )
    nurses = roster["nurse"]
    nurses_needed = law.nurses_required(present, terms.persons_per_nurse)
    if nurses < nurses_needed:
        held[("nurse-ratio", None)] = Condition(
            {"nurses_on_duty": nurses, "attendance": attendance},
            {"nurses": nurses_needed},
            nurses_needed - nurses,
        )
    spaces_needed = law.car_spaces_required(present)
    if terms.spaces_provided < spaces_needed:
        held[("parking-ratio", None)] = Condition(
            {"spaces_provided": terms.spaces_provided, "attendance": attendance},
            {"spaces": spaces_needed},
            spaces_needed - terms.spaces_provided,
        )
    if (
        overnight_from is not None
        and attendance > 0
        and t >= overnight_from
        and not terms.housing_declared
    ):
        held[("overnight-housing", None)] = Condition(
            {"attendance": attendance}, {"housing_declared": True}, attendance
        )
    vehicles = counts.occupied_total
    if vehicles > terms.vehicles_at_one_time:
        held[("vehicles-at-one-time", None)] = Condition(
            {"vehicles": vehicles},
            {"vehicles_at_most": terms.vehicles_at_one_time},
            vehicles - terms.vehicles_at_one_time,
        )
    for lot, sensor in counts.lots.items():
        occupied = sensor.occupied
        if occupied is not None and sensor.capacity > 0:
            share = occupied / sensor.capacity
            if share >= LOT_FULL_SHARE:
                held[("lot-full", lot)] = Condition(
                    {"occupied": occupied, "capacity": sensor.capacity, "share": round(share, 3)},
                    {"share_below": LOT_FULL_SHARE},
                    share,
                )
    security = roster["security"]
    if inside and security < terms.security_guards:
        held[("security-staffing", None)] = Condition(
            {"security_on_duty": security},
            {"security": terms.security_guards},
            terms.security_guards - security,
        )
    for sensor in sorted(counts.offline):
        live = counts.sensors[sensor]
        held[("sensor-offline", sensor)] = Condition(
            {
                "kind": live.kind,
                "available": live.available,
                "stale": live.stale,
            },
            {"online": True},
            1,
        )
    for item, note in deficient.items():
        held[("facility-deficient", item)] = Condition(
            {"result": "deficient", "note": note}, {"result": "ok"}, 1
        )
    for sensor, skew in skewed.items():
        held[("clock-skew", sensor)] = Condition(
            {"skew_s": round(skew, 3)}, {"skew_s_at_most": 30}, abs(skew)
        )
    return held


def attendance_band(
    terms: Terms,
    counts: Counting,
    t: int,
    *,
    admit_capacity: bool,
    hold_at: int,
    resume_below: int,
) -> tuple[int, int]:
    """The attendance range around the current one in which no rule and no command flips.

    Each attendance rule holds exactly when attendance exceeds some figure ``x`` (given
    everything else as it is now); so does the gate command. Between the nearest such
    figures below and above the current attendance, only numbers change.
    """
    roster = counts.roster.counts
    edges = [0, terms.max_at_one_time, roster["nurse"] * terms.persons_per_nurse]
    edges.append(terms.spaces_provided * law.PERSONS_PER_CAR_SPACE)
    if not terms.issued or not terms.inside_window(t):
        edges.append(law.PERMIT_THRESHOLD)
    # The command holds at attendance >= hold_at, and admits again below resume_below.
    edges.append(hold_at - 1 if admit_capacity else resume_below - 1)
    attendance = counts.attendance
    lo = max((x + 1 for x in edges if x < attendance), default=-(2**62))
    hi = min((x for x in edges if x >= attendance), default=2**62)
    return lo, hi


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _permit_required(subject: str | None, o: dict[str, Any], r: dict[str, Any]) -> str:
    why = "no permit has been issued" if not o["permit_issued"] else "outside the permitted hours"
    return f"{_n(o['attendance'])} persons present and {why} (permit:A, penalties:A)"


_MESSAGES: dict[str, Callable[[str | None, dict[str, Any], dict[str, Any]], str]] = {
    "permit-required": _permit_required,
    "max-at-one-time": lambda s, o, r: (
        f"{_n(o['attendance'])} persons present; the permit allows "
        f"{_n(r['attendance_at_most'])} at one time (permit:B(2), permit:G)"
    ),
    "max-collective": lambda s, o, r: (
        f"{_n(o['entries'])} entries; the permit allows {_n(r['entries_at_most'])} "
        "collectively (permit:B(2), permit:G)"
    ),
    "doctor-on-duty": lambda s, o, r: (
        f"{_n(o['doctors_on_duty'])} doctors on duty with {_n(o['attendance'])} persons present; "
        f"at least {_n(r['doctors'])} required at all times (permit:C(9))"
    ),
    "nurse-ratio": lambda s, o, r: (
        f"{_n(o['nurses_on_duty'])} nurses on duty; {_n(o['attendance'])} persons need "
        f"{_n(r['nurses'])} (permit:C(9))"
    ),
    "parking-ratio": lambda s, o, r: (
        f"{_n(o['spaces_provided'])} car spaces provided; {_n(o['attendance'])} persons need "
        f"{_n(r['spaces'])} (permit:C(6))"
    ),
    "overnight-housing": lambda s, o, r: (
        f"{_n(o['attendance'])} persons present past midnight and no housing declared "
        "(permit:B(14), permit:C(7))"
    ),
    "vehicles-at-one-time": lambda s, o, r: (
        f"{_n(o['vehicles'])} cars in the lots; the permit expects at most "
        f"{_n(r['vehicles_at_most'])} at one time (permit:B(2))"
    ),
    "lot-full": lambda s, o, r: (
        f"lot {s} is {o['share']:.0%} full ({_n(o['occupied'])} of {_n(o['capacity'])}) "
        "(permit:C(6))"
    ),
    "security-staffing": lambda s, o, r: (
        f"{_n(o['security_on_duty'])} security guards on duty; {_n(r['security'])} declared "
        "(permit:B(8))"
    ),
    "sensor-offline": lambda s, o, r: (
        f"{o['kind']} sensor {s} is "
        + ("offline (its availability says so)" if o["available"] is False else "silent")
        + "; its figures may be behind"
    ),
    "counter-reset": lambda s, o, r: (
        f"gate counter {s} restarted at seq {o.get('seq')}; its earlier totals were kept"
    ),
    "facility-deficient": lambda s, o, r: (
        f"checklist item {s} marked deficient"
        + (f": {o['note']}" if o.get("note") else "")
        + f" (permit:{s}, permit:G)"
    ),
    "clock-skew": lambda s, o, r: (
        f"sensor {s}'s clock is off by {o['skew_s']:+,.0f} s; its messages are timed on receipt"
    ),
    "evidence-storage": lambda s, o, r: (
        f"the evidence log cannot be written ({o.get('error', 'error')}); messages are held "
        "unacknowledged until it can"
    ),
}


def message_for(
    rule: str, subject: str | None, observed: dict[str, Any], required: dict[str, Any]
) -> str:
    """The one sentence an inspector reads for this alert, with its citation."""
    try:
        return _MESSAGES[rule](subject, observed, required)
    except (KeyError, TypeError, ValueError):
        return f"{rule} {subject or ''}".strip()
