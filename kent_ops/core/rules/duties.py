"""The duties that bind the assembly while it is on: doctors, nurses, parking, housing."""

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


class DoctorOnDuty(Rule):
    name = "doctor-on-duty"
    severity = "breach"
    cite = law.CITE_MEDICAL
    title = "Doctor on duty"
    summary = "During the assembly, fewer doctors on duty than required (at least 1)."
    counts_attendance = True

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.counts.roster.counts["doctor"] < s.terms.doctors_min and s.assembly_on

    def measure(self, s: Situation, subject: str | None) -> Condition:
        doctors, needed = s.counts.roster.counts["doctor"], s.terms.doctors_min
        observed = _over({"doctors_on_duty": doctors, "attendance": s.attendance}, s)
        return Condition(observed, {"doctors": needed}, needed - doctors)

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.assembly_edge,)

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
        "During the assembly, fewer registered nurses on duty than one per 500 persons "
        "(or the permit's ratio)."
    )
    counts_attendance = True

    def _needed(self, s: Situation) -> int:
        return law.nurses_required(s.present, s.terms.persons_per_nurse)

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.counts.roster.counts["nurse"] < self._needed(s) and s.assembly_on

    def measure(self, s: Situation, subject: str | None) -> Condition:
        nurses, needed = s.counts.roster.counts["nurse"], self._needed(s)
        observed = _over({"nurses_on_duty": nurses, "attendance": s.attendance}, s)
        return Condition(observed, {"nurses": needed}, needed - nurses)

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.counts.roster.counts["nurse"] * s.terms.persons_per_nurse, s.assembly_edge)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['nurses_on_duty'])} nurses on duty; {_n(o['attendance'])} persons need "
            f"{_n(r['nurses'])}{_ended(o)} ({self.cite})"
        )


class ParkingRatio(Rule):
    name = "parking-ratio"
    severity = "breach"
    cite = law.CITE_PARKING
    title = "Car spaces per persons present"
    summary = "During the assembly, fewer car spaces than one per four persons in attendance."
    counts_attendance = True

    def holds(self, s: Situation, subject: str | None) -> bool:
        needed = law.car_spaces_required(s.present)
        return s.terms.spaces_provided < needed and s.assembly_on

    def measure(self, s: Situation, subject: str | None) -> Condition:
        provided, needed = s.terms.spaces_provided, law.car_spaces_required(s.present)
        observed = _over({"spaces_provided": provided, "attendance": s.attendance}, s)
        return Condition(observed, {"spaces": needed}, needed - provided)

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.terms.spaces_provided * law.PERSONS_PER_CAR_SPACE, s.assembly_edge)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['spaces_provided'])} car spaces provided; {_n(o['attendance'])} persons "
            f"need {_n(r['spaces'])}{_ended(o)} ({self.cite})"
        )


class OvernightHousing(Rule):
    name = "overnight-housing"
    severity = "breach"
    cite = "permit:B(14), permit:C(7)"
    title = "Overnight without housing"
    summary = "The assembly on across a local midnight and no housing declared."
    counts_attendance = True

    def holds(self, s: Situation, subject: str | None) -> bool:
        since = s.overnight_from
        late = since is not None and s.t >= since and s.assembly_on
        return late and not s.terms.housing_declared

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
