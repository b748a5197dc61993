"""Rules about the site: facilities found deficient, cars and lots, security (permit:B, C, G)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.rules.base import LOT_FULL_SHARE, Condition, Held, Rule, Situation
from kent_ops.core.rules.base import figure as _n


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
