"""Rules about the site: facilities found deficient, cars and lots, security (permit:B, C, G)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.rules.base import LOT_FULL_SHARE, Condition, Rule, Situation
from kent_ops.core.rules.base import figure as _n


class FacilityDeficient(Rule):
    name = "facility-deficient"
    severity = "breach"
    cite = "permit:G"
    title = "Facility found deficient"
    summary = "An inspector found a required facility deficient."
    per_subject = True
    waits = False

    def subjects(self, s: Situation) -> Iterable[str | None]:
        return s.deficient

    def holds(self, s: Situation, subject: str | None) -> bool:
        return subject in s.deficient

    def measure(self, s: Situation, subject: str | None) -> Condition | None:
        note = s.deficient.get(subject or "")
        if note is None:
            return None  # marked ok or n/a: the deficiency's own words stay on the record
        return Condition({"result": "deficient", "note": note}, {"result": "ok"}, 1)

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
    reads = frozenset({"vehicles"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.counts.occupied_total > s.terms.vehicles_at_one_time

    def measure(self, s: Situation, subject: str | None) -> Condition:
        vehicles, most = s.counts.occupied_total, s.terms.vehicles_at_one_time
        return Condition({"vehicles": vehicles}, {"vehicles_at_most": most}, vehicles - most)

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
    reads = frozenset({"vehicles"})

    def subjects(self, s: Situation) -> Iterable[str | None]:
        return s.counts.lots

    def holds(self, s: Situation, subject: str | None) -> bool:
        sensor = s.counts.lots[subject or ""]
        occupied, capacity = sensor.occupied, sensor.capacity
        return occupied is not None and capacity > 0 and occupied / capacity >= LOT_FULL_SHARE

    def measure(self, s: Situation, subject: str | None) -> Condition | None:
        sensor = s.counts.lots.get(subject or "")
        if sensor is None or sensor.occupied is None or sensor.capacity <= 0:
            return None
        share = sensor.occupied / sensor.capacity
        return Condition(
            {"occupied": sensor.occupied, "capacity": sensor.capacity, "share": round(share, 3)},
            {"share_below": LOT_FULL_SHARE},
            share,
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
    reads = frozenset({"staff"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.inside and s.counts.roster.counts["security"] < s.terms.security_guards

    def measure(self, s: Situation, subject: str | None) -> Condition:
        security, declared = s.counts.roster.counts["security"], s.terms.security_guards
        return Condition(
            {"security_on_duty": security}, {"security": declared}, declared - security
        )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['security_on_duty'])} security guards on duty; {_n(r['security'])} "
            f"declared ({self.cite})"
        )
