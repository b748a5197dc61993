"""The live rules: one object per rule, holding its condition, sentence, cite and severity.

A :class:`Rule` says, for one instant (a :class:`Situation`), which of its conditions
hold, with the figures observed and required; it writes the one sentence an inspector
reads; and it names the attendance figures at which it flips (so the engine can skip
evaluations while attendance moves between two of them). It knows nothing of pending
delays or alert ids: that is :mod:`kent_ops.core.alerts`. docs/law.md gives the reading
of the law behind each rule.

Add a rule by writing one class in the module of its kind and listing an instance in
:data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core import wire
from kent_ops.core.counting import Counting
from kent_ops.core.coverage import Allowance
from kent_ops.core.rules.attendance import Dispersing, MaxAtOneTime, MaxCollective, PermitRequired
from kent_ops.core.rules.base import (
    CLOCK_SKEW_S,
    LOT_FULL_SHARE,
    Condition,
    Key,
    Rule,
    Situation,
    Terms,
)
from kent_ops.core.rules.data import (
    BrokerRestarted,
    CarsExceedPersons,
    ClockSkew,
    CounterReset,
    EvidenceFlood,
    EvidenceStorage,
    SensorGap,
    SensorOffline,
    SensorStuck,
)
from kent_ops.core.rules.duties import (
    ApplicationStaffing,
    DoctorOnDuty,
    NurseRatio,
    OvernightHousing,
    ParkingRatio,
)
from kent_ops.core.rules.service import BrokerSession, ClockJump, EvidenceRollback
from kent_ops.core.rules.site import FacilityDeficient, LotFull, SecurityStaffing, VehiclesAtOneTime

__all__ = [
    "CLOCK_SKEW_S",
    "LOT_FULL_SHARE",
    "RULES",
    "Condition",
    "Rule",
    "Situation",
    "Terms",
    "attendance_band",
    "evaluate",
    "held_in",
    "message_for",
    "shown_message",
]

RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        PermitRequired(),
        Dispersing(),
        MaxAtOneTime(),
        MaxCollective(),
        DoctorOnDuty(),
        NurseRatio(),
        ApplicationStaffing(),
        ParkingRatio(),
        OvernightHousing(),
        FacilityDeficient(),
        VehiclesAtOneTime(),
        LotFull(),
        SecurityStaffing(),
        SensorOffline(),
        CounterReset(),
        SensorGap(),
        SensorStuck(),
        BrokerRestarted(),
        ClockSkew(),
        EvidenceStorage(),
        BrokerSession(),
        EvidenceRollback(),
        ClockJump(),
        EvidenceFlood(),
        CarsExceedPersons(),
    )
}
"""Every rule, keyed by name, in the order the law and the dashboards list them."""

_EVALUATED = tuple(
    RULES[name]
    for name in (  # the order conditions are found in, which numbers alerts raised together
        "permit-required",
        "dispersing",
        "max-at-one-time",
        "max-collective",
        "doctor-on-duty",
        "nurse-ratio",
        "application-staffing",
        "parking-ratio",
        "overnight-housing",
        "vehicles-at-one-time",
        "lot-full",
        "security-staffing",
        "sensor-offline",
        "sensor-stuck",
        "broker-restarted",
        "facility-deficient",
        "clock-skew",
        "cars-exceed-persons",
    )
)
_BANDED = tuple(r for r in _EVALUATED if type(r).edges is not Rule.edges)
_ANY_ASSEMBLY = tuple(r for r in _EVALUATED if r.binds_any_assembly)
"""What still holds for a permit of 500 or fewer: permit-required and the data rules."""


def evaluate(
    terms: Terms,
    counts: Counting,
    t: int,
    *,
    issued: bool,
    overnight_from: int | None,
    deficient: Mapping[str, str],
    skewed: Mapping[str, float],
    allowance: Allowance | None = None,
    attendance: int | None = None,
    split: Mapping[str, int] | None = None,
    only: Collection[str] | None = None,
) -> dict[Key, Condition]:
    """Every condition that holds at instant ``t`` (of the rules named in ``only``, if given).

    Args:
        terms: the permit's terms.
        counts: the counting state now.
        t: the instant, in microseconds since the epoch.
        issued: whether the permit counts as issued at ``t`` (a revocation takes it away).
        overnight_from: the first local midnight since the assembly has been continuously
            on, or None while it is off.
        deficient: checklist items an inspector has marked deficient, with the note.
        skewed: sensors whose clock is off by more than 30 s, with the skew in seconds.
        allowance: the dispersal allowance after the permit last stopped covering.
        attendance: evaluate as if this were the attendance (for an alert's worst figure).
        split: and these the persons on each property (an assembly over several).
        only: look at these rules alone (an alert's worst figure needs only its own).
    """
    s = Situation(
        terms=terms,
        counts=counts,
        t=t,
        attendance=counts.attendance if attendance is None else attendance,
        inside=terms.inside_window(t),
        issued=issued,
        overnight_from=overnight_from,
        deficient=deficient,
        skewed=skewed,
        allowance=allowance,
        split=split,
    )
    return held_in(s, only)


def held_in(s: Situation, only: Collection[str] | None = None) -> dict[Key, Condition]:
    """Every condition that holds in ``s``, in the order alerts raised together are numbered
    (of the rules named in ``only``, if given).

    For a permit of 500 or fewer only permit-required and the data rules are looked at:
    the chapter regulates no such assembly (docs/law.md, "What the chapter regulates").
    """
    rules = _EVALUATED if s.terms.regulated else _ANY_ASSEMBLY
    if only is not None:
        rules = tuple(rule for rule in rules if rule.name in only)
    return {(rule.name, subject): cond for rule in rules for subject, cond in rule.conditions(s)}


def attendance_band(
    terms: Terms,
    counts: Counting,
    t: int,
    *,
    issued: bool,
    allowance: Allowance | None,
    admit_capacity: bool,
    hold_at: int,
    resume_below: int,
) -> tuple[int, int]:
    """The attendance range around the current one in which no rule and no command flips.

    Each attendance rule holds exactly when attendance exceeds some figure ``x`` (given
    everything else as it is now); so does the gate command. Between the nearest such
    figures below and above the current attendance, only numbers change.
    """
    attendance = counts.attendance
    s = Situation(
        terms=terms,
        counts=counts,
        t=t,
        attendance=attendance,
        inside=terms.inside_window(t),
        issued=issued,
        overnight_from=None,
        deficient={},
        skewed={},
        allowance=allowance,
    )
    rules = _BANDED if terms.regulated else tuple(r for r in _BANDED if r.binds_any_assembly)
    edges = [x for rule in rules for x in rule.edges(s)]
    if counts.offset:
        # A condition that holds only by an inspector's adjustment is an estimate: it
        # would hold on the gate counts alone above x, that is above x + offset now.
        edges += [x + counts.offset for x in edges]
    # The command holds at attendance >= hold_at, and admits again below resume_below;
    # when the permit covers no assembly over 500, every gate holds at 500 or more.
    edges.append(hold_at - 1 if admit_capacity else resume_below - 1)
    if not s.covered:
        edges.append(law.PERMIT_THRESHOLD - 1)
    lo = max((x + 1 for x in edges if x < attendance), default=-(2**62))
    hi = min((x for x in edges if x >= attendance), default=2**62)
    return lo, hi


def message_for(
    rule: str, subject: str | None, observed: Mapping[str, Any], required: Mapping[str, Any]
) -> str:
    """The one sentence an inspector reads for this alert, with its citation."""
    entry = RULES.get(rule)
    if entry is None:
        return f"{rule} {subject or ''}".strip()
    try:
        return entry.sentence(subject, observed, required)
    except (KeyError, TypeError, ValueError):  # figures from an older program's log
        return f"{rule} {subject or ''}".strip()


def shown_message(alert: wire.Alert) -> str:
    """The sentence a person reads for an alert: its figures now while the condition
    holds; once it has ended, its worst figures. A nurse-ratio breach that ended with
    "6 nurses on duty; 2,840 persons need 6" says nothing of the breach; its worst does."""
    worst = alert.worst
    entry = RULES.get(alert.rule)
    if alert.ended_at is None or not worst.observed or entry is None:
        return alert.message
    try:
        return entry.sentence(alert.subject, worst.observed, worst.required)
    except (KeyError, TypeError, ValueError):  # figures from an older program's log
        return alert.message
