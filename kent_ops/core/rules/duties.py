"""The duties that bind the assembly while it is on: doctors, nurses, parking, housing.

The chapter regulates an assembly that "exceeds 500 persons", so the staffing and parking
duties hold only while the assembly is on *and* more than 500 are present (docs/law.md,
"Duties bind above 500"). ``doctor-on-duty`` and ``nurse-ratio`` test the law's own
minimums (permit:C(9)); where the permit asks more (two doctors, a nurse per 400),
falling short of the application while meeting the law is ``application-staffing``, a
ground for revocation under permit:G ("failed to provide the facilities as specified in
the application"), not a breach of C(9). Required counts round up; while a breach holds
only because of that rounding (the staff would meet the exact ratio) its stretch is
``rounding``, not proven (docs/law.md, "Rounding up"); a doctor's shortfall, or a figure
short of the application, never is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.rules.base import Condition, Rule, Situation
from kent_ops.core.rules.base import figure as _n


def _over(observed: dict[str, Any], s: Situation) -> dict[str, Any]:
    """Figures of a duty, saying so when the assembly is off (the duty then ended)."""
    return observed if s.assembly_on else {**observed, "assembly_on": False}


def _ended(o: Mapping[str, Any]) -> str:
    return "; the assembly is over" if o.get("assembly_on") is False else ""


def within_rounding(staff: int, persons: int, per: int) -> bool:
    """``staff`` meets one for each whole ``per`` persons (the exact ratio, no rounding up).

    ``staff × per ≥ persons − (per − 1)``: 2 nurses for 1,001 persons, 250 car spaces
    for 1,001. kent-ops reads "for each 500" and "for every four" as each whole or part
    (docs/law.md, "Rounding up"), so such a figure is still a breach, said to hold only
    by that reading.
    """
    return staff * per >= persons - (per - 1)


def _rounding(o: Mapping[str, Any], staff: str, noun: str, per: int) -> str:
    if not o.get("within_rounding"):
        return ""
    return (
        f"; this holds only by rounding up (kent-ops' reading): {_n(o[staff])} {noun} meet "
        f"one for each whole {per} persons"
    )


def _binds(s: Situation) -> bool:
    """The assembly is on and more than 500 persons are present (docs/law.md)."""
    return s.present > law.PERMIT_THRESHOLD and s.assembly_on


def _exact(staff: int, noun: str, per: int) -> str:
    """The exact ratio a rounding stretch rests on, in words."""
    return f"{_n(staff)} {noun} meet one for each whole {_n(per)} persons (the exact ratio)"


def _plural(n: int, one: str, many: str) -> str:
    return f"{_n(n)} {one if n == 1 else many}"


class DoctorOnDuty(Rule):
    name = "doctor-on-duty"
    severity = "breach"
    cite = law.CITE_MEDICAL
    title = "Doctor on duty"
    summary = "With more than 500 present, no doctor on duty (the law requires at least 1)."
    reads = frozenset({"attendance", "staff"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.counts.roster.counts["doctor"] < law.DOCTORS_MIN and _binds(s)

    def measure(self, s: Situation, subject: str | None) -> Condition:
        doctors, needed = s.counts.roster.counts["doctor"], law.DOCTORS_MIN
        observed = _over({"doctors_on_duty": doctors, "attendance": s.attendance}, s)
        return Condition(observed, {"doctors": needed}, needed - doctors)

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.assembly_edge, law.PERMIT_THRESHOLD)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['doctors_on_duty'])} doctors on duty with {_n(o['attendance'])} persons "
            f"present; at least {_n(r['doctors'])} required at all times{_ended(o)} ({self.cite})"
        )


class NurseRatio(Rule):
    name = "nurse-ratio"
    severity = "breach"
    cite = law.CITE_MEDICAL
    title = "Registered nurses per persons present"
    summary = (
        "With more than 500 present, fewer registered nurses on duty than one per 500 persons "
        "(rounded up)."
    )
    reads = frozenset({"attendance", "staff"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.counts.roster.counts["nurse"] < law.nurses_required(s.present) and _binds(s)

    def measure(self, s: Situation, subject: str | None) -> Condition:
        nurses, needed = s.counts.roster.counts["nurse"], law.nurses_required(s.present)
        observed = _over({"nurses_on_duty": nurses, "attendance": s.attendance}, s)
        if nurses < needed and within_rounding(nurses, s.present, law.PERSONS_PER_NURSE):
            observed["within_rounding"] = True
        return Condition(observed, {"nurses": needed}, needed - nurses)

    def edges(self, s: Situation) -> Iterable[int]:
        nurses = s.counts.roster.counts["nurse"]
        per = law.PERSONS_PER_NURSE
        # It holds above nurses × 500; only by the rounding up to nurses × 500 + 499.
        return (nurses * per, nurses * per + per - 1, s.assembly_edge, law.PERMIT_THRESHOLD)

    def rounding(self, s: Situation, subject: str | None) -> str | None:
        nurses = s.counts.roster.counts["nurse"]
        if within_rounding(nurses, s.present, law.PERSONS_PER_NURSE):
            return _exact(nurses, "nurses" if nurses != 1 else "nurse", law.PERSONS_PER_NURSE)
        return None

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_plural(o['nurses_on_duty'], 'nurse', 'nurses')} on duty; "
            f"{_n(o['attendance'])} persons need "
            f"{_n(r['nurses'])}{_rounding(o, 'nurses_on_duty', 'nurses', law.PERSONS_PER_NURSE)}"
            f"{_ended(o)} ({self.cite})"
        )


class ApplicationStaffing(Rule):
    """The law's medical minimum met, the application's stricter figure not (permit:G)."""

    name = "application-staffing"
    severity = "breach"
    cite = law.CITE_REVOCATION
    title = "Medical staff below the application"
    summary = (
        "With more than 500 present, the law's medical minimums met but fewer doctors or "
        "nurses on duty than the application specified: facilities not provided as specified."
    )
    reads = frozenset({"attendance", "staff"})

    def _short(self, s: Situation) -> tuple[bool, bool]:
        """(doctors short of the application, nurses short of it), each meeting the law."""
        roster, terms = s.counts.roster.counts, s.terms
        doctors, nurses = roster["doctor"], roster["nurse"]
        law_nurses = law.nurses_required(s.present)
        app_nurses = law.nurses_required(s.present, terms.persons_per_nurse)
        return (
            law.DOCTORS_MIN <= doctors < terms.doctors_min,
            law_nurses <= nurses < app_nurses,
        )

    def holds(self, s: Situation, subject: str | None) -> bool:
        return _binds(s) and any(self._short(s))

    def measure(self, s: Situation, subject: str | None) -> Condition:
        roster, terms = s.counts.roster.counts, s.terms
        doctors, nurses = roster["doctor"], roster["nurse"]
        app_nurses = law.nurses_required(s.present, terms.persons_per_nurse)
        short_doctors, short_nurses = self._short(s)
        observed: dict[str, Any] = {
            "doctors_on_duty": doctors,
            "nurses_on_duty": nurses,
            "attendance": s.attendance,
        }
        required = {
            "doctors": terms.doctors_min,
            "nurses": app_nurses,
            "law_doctors": law.DOCTORS_MIN,
            "law_nurses": law.nurses_required(s.present),
            "persons_per_nurse": terms.persons_per_nurse,
        }
        shortfall = (
            max(terms.doctors_min - doctors, 0) * short_doctors
            + max(app_nurses - nurses, 0) * short_nurses
        )
        return Condition(_over(observed, s), required, shortfall)

    def edges(self, s: Situation) -> Iterable[int]:
        nurses = s.counts.roster.counts["nurse"]
        return (
            nurses * s.terms.persons_per_nurse,
            nurses * law.PERSONS_PER_NURSE,
            s.assembly_edge,
            law.PERMIT_THRESHOLD,
        )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        parts = []
        doctors, nurses = o["doctors_on_duty"], o["nurses_on_duty"]
        if r["law_doctors"] <= doctors < r["doctors"]:
            parts.append(
                f"{_plural(doctors, 'doctor', 'doctors')} on duty; the application specified "
                f"{_n(r['doctors'])} (the law requires {_n(r['law_doctors'])})"
            )
        if r["law_nurses"] <= nurses < r["nurses"]:
            parts.append(
                f"{_plural(nurses, 'nurse', 'nurses')} on duty for {_n(o['attendance'])} "
                f"persons; the application specified {_n(r['nurses'])} (the law requires "
                f"{_n(r['law_nurses'])})"
            )
        if not parts:
            parts.append(
                f"{_plural(doctors, 'doctor', 'doctors')} and "
                f"{_plural(nurses, 'nurse', 'nurses')} on duty, as the application specified"
            )
        return f"{'; '.join(parts)}{_ended(o)} ({self.cite})"


class ParkingRatio(Rule):
    name = "parking-ratio"
    severity = "breach"
    cite = law.CITE_PARKING
    title = "Car spaces per persons present"
    summary = "With more than 500 present, fewer car spaces than one per four persons present."
    reads = frozenset({"attendance"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        needed = law.car_spaces_required(s.present)
        return s.terms.spaces_provided < needed and _binds(s)

    def measure(self, s: Situation, subject: str | None) -> Condition:
        provided, needed = s.terms.spaces_provided, law.car_spaces_required(s.present)
        observed = _over({"spaces_provided": provided, "attendance": s.attendance}, s)
        if provided < needed and within_rounding(provided, s.present, law.PERSONS_PER_CAR_SPACE):
            observed["within_rounding"] = True
        return Condition(observed, {"spaces": needed}, needed - provided)

    def edges(self, s: Situation) -> Iterable[int]:
        spaces, per = s.terms.spaces_provided, law.PERSONS_PER_CAR_SPACE
        return (spaces * per, spaces * per + per - 1, s.assembly_edge, law.PERMIT_THRESHOLD)

    def rounding(self, s: Situation, subject: str | None) -> str | None:
        spaces = s.terms.spaces_provided
        if within_rounding(spaces, s.present, law.PERSONS_PER_CAR_SPACE):
            return _exact(spaces, "car spaces", law.PERSONS_PER_CAR_SPACE)
        return None

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['spaces_provided'])} car spaces provided; {_n(o['attendance'])} persons "
            f"need {_n(r['spaces'])}"
            f"{_rounding(o, 'spaces_provided', 'car spaces', law.PERSONS_PER_CAR_SPACE)}"
            f"{_ended(o)} ({self.cite})"
        )


class OvernightHousing(Rule):
    name = "overnight-housing"
    severity = "breach"
    cite = "permit:B(14), permit:C(7)"
    title = "Overnight without housing"
    summary = (
        "The assembly on across a local midnight inside a permitted window, the permit "
        "contemplating the night, and no housing declared."
    )
    reads = frozenset({"attendance"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        """Only where the night was contemplated and the midnight fell inside a window:
        never while the crowd disperses after the hours, never after the last window
        (an overrun is ``permit-required``, nothing more; docs/law.md)."""
        terms = s.terms
        if terms.housing_declared or not terms.night_contemplated or not s.inside:
            return False
        since = s.overnight_from
        return since is not None and s.t >= since and s.assembly_on

    def measure(self, s: Situation, subject: str | None) -> Condition:
        observed = _over({"attendance": s.attendance}, s)
        return Condition(observed, {"housing_declared": True}, s.attendance)

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.assembly_edge,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['attendance'])} persons present past midnight and no housing declared"
            f"{_ended(o)} ({self.cite})"
        )
