"""The live rules: one object per rule, holding its condition, sentence, cite and severity.

A :class:`Rule` says, for one instant (a :class:`Situation`), which of its conditions
hold, with the figures observed and required; it writes the one sentence an inspector
reads; and it names the attendance figures at which it flips (so the engine can skip
evaluations while attendance moves between two of them). It knows nothing of pending
delays or alert ids: that is :mod:`kent_ops.core.alerts`. docs/law.md gives the reading
of the law behind each rule.

Add a rule by writing one class here and listing an instance in :data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kent_ops.core import ordinance as law
from kent_ops.core.assembly import assembly_edge, assembly_on
from kent_ops.core.counting import Counting
from kent_ops.core.permit import Permit
from kent_ops.core.timeutil import to_us
from kent_ops.core.wire import Severity

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
    "message_for",
]

Key = tuple[str, str | None]
LOT_FULL_SHARE = 0.95
"""A lot this full (or more) is warned about: cars are about to be turned away."""
CLOCK_SKEW_S = 30
"""A device whose clock is off by more than this is timed on receipt instead."""


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

    def window_at(self, t: int) -> int | None:
        """The index of the window that holds ``t`` (half-open), if any."""
        for i, (start, end) in enumerate(self.windows):
            if start <= t < end:
                return i
        return None


@dataclass(frozen=True, slots=True)
class Situation:
    """Everything a rule may look at, at one instant (times in microseconds)."""

    terms: Terms
    counts: Counting
    t: int
    attendance: int
    inside: bool
    issued: bool
    overnight_from: int | None
    deficient: Mapping[str, str]
    skewed: Mapping[str, float]

    @property
    def present(self) -> int:
        return max(self.attendance, 0)

    @property
    def assembly_on(self) -> bool:
        """The duties that bind "the assembly" hold only while it is on."""
        return assembly_on(self.attendance, self.inside)

    @property
    def assembly_edge(self) -> int:
        return assembly_edge(self.inside)


Held = Iterator[tuple[str | None, Condition]]


class Rule:
    """One live rule. Subclasses set the class attributes and override what applies."""

    name: ClassVar[str]
    severity: ClassVar[Severity]
    cite: ClassVar[str]
    title: ClassVar[str]
    """A plain name for the rule, for readers who do not know its id."""
    summary: ClassVar[str]
    """One line saying when it holds, for the dashboard's help and the report."""
    per_subject: ClassVar[bool] = False
    """Each lot, sensor or checklist item is its own condition."""
    counts_attendance: ClassVar[bool] = False
    """Its figures come from the gate counts: uncertain while a gate counter is down."""
    waits: ClassVar[bool] = True
    """It must hold for the permit's ``pending_s`` before it is raised."""

    def conditions(self, s: Situation) -> Held:
        """Each (subject, condition) of this rule that holds in ``s``."""
        return iter(())

    def edges(self, s: Situation) -> Iterable[int]:
        """Attendance figures ``x`` at which it flips: it holds iff attendance > x."""
        return ()

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        """The one sentence an inspector reads, with the citation."""
        raise NotImplementedError

    def cite_for(self, subject: str | None) -> str:
        """The citation of one of its conditions (some depend on the subject)."""
        return self.cite


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


class PermitRequired(Rule):
    name = "permit-required"
    severity = "breach"
    cite = f"{law.CITE_THRESHOLD}, penalties:A"
    title = "Assembly without a permit"
    summary = "More than 500 persons without an issued permit, or outside the permitted hours."
    counts_attendance = True

    def conditions(self, s: Situation) -> Held:
        issued = s.issued
        if s.attendance > law.PERMIT_THRESHOLD and (not issued or not s.inside):
            yield (
                None,
                Condition(
                    {
                        "attendance": s.attendance,
                        "permit_issued": issued,
                        "inside_window": s.inside,
                    },
                    {"attendance_at_most": law.PERMIT_THRESHOLD},
                    s.attendance,
                ),
            )

    def edges(self, s: Situation) -> Iterable[int]:
        return () if s.issued and s.inside else (law.PERMIT_THRESHOLD,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        issued = o["permit_issued"]
        why = "outside the permitted hours" if issued else "no permit has been issued"
        return f"{_n(o['attendance'])} persons present and {why} ({self.cite})"


class MaxAtOneTime(Rule):
    name = "max-at-one-time"
    severity = "breach"
    cite = f"{law.CITE_THRESHOLD}, permit:B(2)"
    title = "Attendance above the permitted maximum"
    summary = "Attendance above the permitted maximum at one time."
    counts_attendance = True

    def conditions(self, s: Situation) -> Held:
        most = s.terms.max_at_one_time
        if s.attendance > most:
            yield (
                None,
                Condition(
                    {"attendance": s.attendance}, {"attendance_at_most": most}, s.attendance - most
                ),
            )

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.terms.max_at_one_time,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['attendance'])} persons present; the permit allows "
            f"{_n(r['attendance_at_most'])} at one time ({self.cite})"
        )


class MaxCollective(Rule):
    name = "max-collective"
    severity = "breach"
    cite = f"{law.CITE_THRESHOLD}, permit:B(2)"
    title = "Entries above the permitted total"
    summary = "Entries above the permitted maximum collectively."
    counts_attendance = True

    def conditions(self, s: Situation) -> Held:
        entries, most = s.counts.entries, s.terms.max_collective
        if entries > most:
            yield None, Condition({"entries": entries}, {"entries_at_most": most}, entries - most)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['entries'])} entries; the permit allows {_n(r['entries_at_most'])} "
            f"collectively ({self.cite})"
        )


class DoctorOnDuty(Rule):
    name = "doctor-on-duty"
    severity = "breach"
    cite = law.CITE_MEDICAL
    title = "Doctor on duty"
    summary = "During the assembly, fewer doctors on duty than required (at least 1)."
    counts_attendance = True

    def conditions(self, s: Situation) -> Held:
        doctors, needed = s.counts.roster.counts["doctor"], s.terms.doctors_min
        if doctors < needed and s.assembly_on:
            yield (
                None,
                Condition(
                    {"doctors_on_duty": doctors, "attendance": s.attendance},
                    {"doctors": needed},
                    needed - doctors,
                ),
            )

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.assembly_edge,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['doctors_on_duty'])} doctors on duty with {_n(o['attendance'])} persons "
            f"present; at least {_n(r['doctors'])} required at all times ({self.cite})"
        )


class NurseRatio(Rule):
    name = "nurse-ratio"
    severity = "breach"
    cite = law.CITE_MEDICAL
    title = "Registered nurses per persons present"
    summary = (
        "During the assembly, fewer registered nurses on duty than one per 500 persons "
        "(or the permit's ratio)."
    )
    counts_attendance = True

    def conditions(self, s: Situation) -> Held:
        nurses = s.counts.roster.counts["nurse"]
        needed = law.nurses_required(s.present, s.terms.persons_per_nurse)
        if nurses < needed and s.assembly_on:
            yield (
                None,
                Condition(
                    {"nurses_on_duty": nurses, "attendance": s.attendance},
                    {"nurses": needed},
                    needed - nurses,
                ),
            )

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.counts.roster.counts["nurse"] * s.terms.persons_per_nurse, s.assembly_edge)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['nurses_on_duty'])} nurses on duty; {_n(o['attendance'])} persons need "
            f"{_n(r['nurses'])} ({self.cite})"
        )


class ParkingRatio(Rule):
    name = "parking-ratio"
    severity = "breach"
    cite = law.CITE_PARKING
    title = "Car spaces per persons present"
    summary = "During the assembly, fewer car spaces than one per four persons in attendance."
    counts_attendance = True

    def conditions(self, s: Situation) -> Held:
        provided, needed = s.terms.spaces_provided, law.car_spaces_required(s.present)
        if provided < needed and s.assembly_on:
            yield (
                None,
                Condition(
                    {"spaces_provided": provided, "attendance": s.attendance},
                    {"spaces": needed},
                    needed - provided,
                ),
            )

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.terms.spaces_provided * law.PERSONS_PER_CAR_SPACE, s.assembly_edge)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['spaces_provided'])} car spaces provided; {_n(o['attendance'])} persons "
            f"need {_n(r['spaces'])} ({self.cite})"
        )


class OvernightHousing(Rule):
    name = "overnight-housing"
    severity = "breach"
    cite = "permit:B(14), permit:C(7)"
    title = "Overnight without housing"
    summary = "The assembly on across a local midnight and no housing declared."
    counts_attendance = True

    def conditions(self, s: Situation) -> Held:
        since = s.overnight_from
        late = since is not None and s.t >= since and s.assembly_on
        if late and not s.terms.housing_declared:
            yield (
                None,
                Condition({"attendance": s.attendance}, {"housing_declared": True}, s.attendance),
            )

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.assembly_edge,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['attendance'])} persons present past midnight and no housing declared "
            f"({self.cite})"
        )


class FacilityDeficient(Rule):
    name = "facility-deficient"
    severity = "breach"
    cite = "permit:G"
    title = "Facility found deficient"
    summary = "An inspector found a required facility deficient."
    per_subject = True
    waits = False

    def conditions(self, s: Situation) -> Held:
        for item, note in s.deficient.items():
            yield item, Condition({"result": "deficient", "note": note}, {"result": "ok"}, 1)

    def cite_for(self, subject: str | None) -> str:
        return f"permit:{subject}, {self.cite}" if subject else self.cite

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        note = f": {o['note']}" if o.get("note") else ""
        return f"checklist item {subject} marked deficient{note} ({self.cite_for(subject)})"


class VehiclesAtOneTime(Rule):
    name = "vehicles-at-one-time"
    severity = "warning"
    cite = "permit:B(2)"
    title = "More cars than expected"
    summary = "More cars in the lots than the permit expects at one time."

    def conditions(self, s: Situation) -> Held:
        vehicles, most = s.counts.occupied_total, s.terms.vehicles_at_one_time
        if vehicles > most:
            yield (
                None,
                Condition({"vehicles": vehicles}, {"vehicles_at_most": most}, vehicles - most),
            )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['vehicles'])} cars in the lots; the permit expects at most "
            f"{_n(r['vehicles_at_most'])} at one time ({self.cite})"
        )


class LotFull(Rule):
    name = "lot-full"
    severity = "warning"
    cite = law.CITE_PARKING
    title = "Parking lot nearly full"
    summary = f"A parking lot at {LOT_FULL_SHARE:.0%} of its capacity or more."
    per_subject = True

    def conditions(self, s: Situation) -> Held:
        for lot, sensor in s.counts.lots.items():
            occupied = sensor.occupied
            if occupied is not None and sensor.capacity > 0:
                share = occupied / sensor.capacity
                if share >= LOT_FULL_SHARE:
                    observed = {"occupied": occupied, "capacity": sensor.capacity}
                    yield (
                        lot,
                        Condition(
                            {**observed, "share": round(share, 3)},
                            {"share_below": LOT_FULL_SHARE},
                            share,
                        ),
                    )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"lot {subject} is {o['share']:.0%} full ({_n(o['occupied'])} of "
            f"{_n(o['capacity'])}) ({self.cite})"
        )


class SecurityStaffing(Rule):
    name = "security-staffing"
    severity = "warning"
    cite = "permit:B(8)"
    title = "Security guards on duty"
    summary = "Fewer security guards on duty than declared, inside the permitted hours."

    def conditions(self, s: Situation) -> Held:
        security, declared = s.counts.roster.counts["security"], s.terms.security_guards
        if s.inside and security < declared:
            yield (
                None,
                Condition(
                    {"security_on_duty": security}, {"security": declared}, declared - security
                ),
            )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['security_on_duty'])} security guards on duty; {_n(r['security'])} "
            f"declared ({self.cite})"
        )


class SensorOffline(Rule):
    name = "sensor-offline"
    severity = "data"
    cite = "—"
    title = "Sensor offline"
    summary = "A listed sensor is offline or has been silent too long."
    per_subject = True

    def conditions(self, s: Situation) -> Held:
        for sensor in sorted(s.counts.offline):
            live = s.counts.sensors[sensor]
            yield (
                sensor,
                Condition(
                    {"kind": live.kind, "available": live.available, "stale": live.stale},
                    {"online": True},
                    1,
                ),
            )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        how = "offline (its availability says so)" if o["available"] is False else "silent"
        return f"{o['kind']} sensor {subject} is {how}; its figures may be behind"


class CounterReset(Rule):
    """An event, not a condition: the engine raises it when a counter restarts."""

    name = "counter-reset"
    severity = "data"
    cite = "—"
    title = "Gate counter restarted"
    summary = "A gate counter restarted; its totals were stitched."
    per_subject = True

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        seq = o.get("seq")
        return f"gate counter {subject} restarted at seq {seq}; its earlier totals were kept"


class ClockSkew(Rule):
    name = "clock-skew"
    severity = "data"
    cite = "—"
    title = "Sensor clock off"
    summary = (
        f"A sensor's clock is off by more than {CLOCK_SKEW_S:.0f} s; its messages are timed "
        "on receipt."
    )
    per_subject = True
    waits = False

    def conditions(self, s: Situation) -> Held:
        for sensor, skew in s.skewed.items():
            yield (
                sensor,
                Condition({"skew_s": round(skew, 3)}, {"skew_s_at_most": CLOCK_SKEW_S}, abs(skew)),
            )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"sensor {subject}'s clock is off by {o['skew_s']:+,.0f} s; its messages are timed "
            "on receipt"
        )


class EvidenceStorage(Rule):
    """Raised by the service, not the engine: the evidence log cannot be written."""

    name = "evidence-storage"
    severity = "data"
    cite = "—"
    title = "Evidence log not writable"
    summary = "The evidence log cannot be written; messages are not acknowledged until it can."

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"the evidence log cannot be written ({o.get('error', 'error')}); messages are held "
            "unacknowledged until it can"
        )


RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        PermitRequired(),
        MaxAtOneTime(),
        MaxCollective(),
        DoctorOnDuty(),
        NurseRatio(),
        ParkingRatio(),
        OvernightHousing(),
        FacilityDeficient(),
        VehiclesAtOneTime(),
        LotFull(),
        SecurityStaffing(),
        SensorOffline(),
        CounterReset(),
        ClockSkew(),
        EvidenceStorage(),
    )
}
"""Every rule, keyed by name, in the order the law and the dashboards list them."""

_EVALUATED = tuple(
    RULES[name]
    for name in (  # the order conditions are found in, which numbers alerts raised together
        "permit-required",
        "max-at-one-time",
        "max-collective",
        "doctor-on-duty",
        "nurse-ratio",
        "parking-ratio",
        "overnight-housing",
        "vehicles-at-one-time",
        "lot-full",
        "security-staffing",
        "sensor-offline",
        "facility-deficient",
        "clock-skew",
    )
)
_BANDED = tuple(r for r in _EVALUATED if type(r).edges is not Rule.edges)


def evaluate(
    terms: Terms,
    counts: Counting,
    t: int,
    *,
    issued: bool,
    overnight_from: int | None,
    deficient: Mapping[str, str],
    skewed: Mapping[str, float],
    attendance: int | None = None,
) -> dict[Key, Condition]:
    """Every condition that holds at instant ``t``.

    Args:
        terms: the permit's terms.
        counts: the counting state now.
        t: the instant, in microseconds since the epoch.
        issued: whether the permit counts as issued at ``t`` (a revocation takes it away).
        overnight_from: the first local midnight since the assembly has been continuously
            on, or None while it is off.
        deficient: checklist items an inspector has marked deficient, with the note.
        skewed: sensors whose clock is off by more than 30 s, with the skew in seconds.
        attendance: evaluate as if this were the attendance (for an alert's worst figure).
    """
    s = Situation(
        terms,
        counts,
        t,
        counts.attendance if attendance is None else attendance,
        terms.inside_window(t),
        issued,
        overnight_from,
        deficient,
        skewed,
    )
    return {
        (rule.name, subject): cond for rule in _EVALUATED for subject, cond in rule.conditions(s)
    }


def attendance_band(
    terms: Terms,
    counts: Counting,
    t: int,
    *,
    issued: bool,
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
    s = Situation(terms, counts, t, attendance, terms.inside_window(t), issued, None, {}, {})
    edges = [x for rule in _BANDED for x in rule.edges(s)]
    # The command holds at attendance >= hold_at, and admits again below resume_below;
    # without an issued permit, every gate holds at 500 or more.
    edges.append(hold_at - 1 if admit_capacity else resume_below - 1)
    if not issued:
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
    except (KeyError, TypeError, ValueError, NotImplementedError):
        return f"{rule} {subject or ''}".strip()
