"""Rules on how many persons: the threshold and the permit's own maximums (permit:A, B(2))."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.rules.base import Condition, Rule, Situation
from kent_ops.core.rules.base import figure as _n


class PermitRequired(Rule):
    name = "permit-required"
    severity = "breach"
    cite = f"{law.CITE_THRESHOLD}, penalties:A"
    title = "Assembly without a permit"
    summary = "More than 500 persons without an issued permit, or outside the permitted hours."
    counts_attendance = True

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.attendance > law.PERMIT_THRESHOLD and not (s.issued and s.inside)

    def measure(self, s: Situation, subject: str | None) -> Condition:
        return Condition(
            {"attendance": s.attendance, "permit_issued": s.issued, "inside_window": s.inside},
            {"attendance_at_most": law.PERMIT_THRESHOLD},
            s.attendance,
        )

    def edges(self, s: Situation) -> Iterable[int]:
        return () if s.issued and s.inside else (law.PERMIT_THRESHOLD,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        if o["attendance"] <= r.get("attendance_at_most", law.PERMIT_THRESHOLD):
            return f"{_n(o['attendance'])} persons present: not more than 500 ({self.cite})"
        if o.get("permit_issued") and o.get("inside_window"):
            return (
                f"{_n(o['attendance'])} persons present, inside the permitted hours ({self.cite})"
            )
        why = "outside the permitted hours" if o["permit_issued"] else "the permit is not issued"
        return f"{_n(o['attendance'])} persons present and {why} ({self.cite})"


class MaxAtOneTime(Rule):
    name = "max-at-one-time"
    severity = "breach"
    cite = f"{law.CITE_THRESHOLD}, permit:B(2)"
    title = "Attendance above the permitted maximum"
    summary = "Attendance above the permitted maximum at one time."
    counts_attendance = True

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.attendance > s.terms.max_at_one_time

    def measure(self, s: Situation, subject: str | None) -> Condition:
        most = s.terms.max_at_one_time
        return Condition(
            {"attendance": s.attendance}, {"attendance_at_most": most}, s.attendance - most
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

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.counts.entries > s.terms.max_collective

    def measure(self, s: Situation, subject: str | None) -> Condition:
        entries, most = s.counts.entries, s.terms.max_collective
        return Condition({"entries": entries}, {"entries_at_most": most}, entries - most)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['entries'])} entries; the permit allows {_n(r['entries_at_most'])} "
            f"collectively ({self.cite})"
        )
