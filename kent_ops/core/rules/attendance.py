"""Rules on how many persons: the threshold, dispersal and the permit's figures (permit:A, B(2))."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.coverage import clock_of, local_iso
from kent_ops.core.rules.base import Condition, Rule, Situation
from kent_ops.core.rules.base import figure as _n

_ENDED = {"window": "the permitted hours ended", "revocation": "the permit was revoked"}


def _after_end(s: Situation) -> dict[str, Any]:
    """When and how the permit stopped covering, and how the allowance ended, as figures."""
    a = s.allowance
    if a is None or s.covered:
        return {}
    tz = s.terms.tz
    out: dict[str, Any] = {"ended_at": local_iso(a.end.at, tz), "ended_by": a.end.by}
    if a.admitted_at is not None:
        out |= {"dispersal": "admitted", "admitted_at": local_iso(a.admitted_at, tz)}
    elif not a.open:
        out |= {"dispersal": "allowance over", "allowance_until": local_iso(a.until, tz)}
    else:
        out["allowance_until"] = local_iso(a.until, tz)
    return out


def _split(observed: dict[str, Any], s: Situation) -> None:
    """For an assembly over several properties, the persons on each one at this instant:
    each owner who let property be used is answerable (permit:A, penalties:A)."""
    persons = s.by_property()
    if persons is not None:
        observed["properties"] = persons


class PermitRequired(Rule):
    name = "permit-required"
    severity = "breach"
    cite = f"{law.CITE_THRESHOLD}, penalties:A"
    title = "Assembly without a permit"
    summary = (
        "More than 500 persons without an issued permit, or outside the permitted hours "
        "once the time to disperse is over or someone is admitted."
    )
    reads = frozenset({"attendance"})
    binds_any_assembly = True

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.attendance > law.PERMIT_THRESHOLD and not s.covered and not s.dispersing

    def measure(self, s: Situation, subject: str | None) -> Condition:
        observed: dict[str, Any] = {
            "attendance": s.attendance,
            "permit_issued": s.issued,
            "inside_window": s.inside,
        }
        if not s.terms.regulated:
            observed["permit_max_at_one_time"] = s.terms.max_at_one_time
        observed |= _after_end(s)
        _split(observed, s)
        return Condition(observed, {"attendance_at_most": law.PERMIT_THRESHOLD}, s.attendance)

    def edges(self, s: Situation) -> Iterable[int]:
        return () if s.covered or s.dispersing else (law.PERMIT_THRESHOLD,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        n = _n(o["attendance"])
        if o["attendance"] <= r.get("attendance_at_most", law.PERMIT_THRESHOLD):
            return f"{n} persons present: not more than 500 ({self.cite})"
        if "permit_max_at_one_time" in o:
            return (
                f"{n} persons present; a permit for at most {_n(o['permit_max_at_one_time'])} "
                f"covers no assembly of more than 500 ({self.cite})"
            )
        ended = o.get("ended_at")
        if ended is not None:
            what = f"{_ENDED.get(o.get('ended_by', ''), 'the permit stopped')} at {clock_of(ended)}"
            if o.get("dispersal") == "admitted":
                return (
                    f"{n} persons present and someone was admitted at "
                    f"{clock_of(o['admitted_at'])}, after {what} ({self.cite})"
                )
            if o.get("dispersal") == "allowance over":
                return (
                    f"{n} persons present after {what}, and the time allowed to disperse "
                    f"ended at {clock_of(o['allowance_until'])} ({self.cite})"
                )
        if o.get("permit_issued") and o.get("inside_window"):
            return f"{n} persons present, inside the permitted hours ({self.cite})"
        why = "outside the permitted hours" if o["permit_issued"] else "the permit is not issued"
        return f"{n} persons present and {why} ({self.cite})"


class Dispersing(Rule):
    name = "dispersing"
    severity = "warning"
    cite = law.CITE_THRESHOLD
    title = "Crowd dispersing"
    summary = (
        "More than 500 persons leaving after the permitted hours ended or the permit was "
        "revoked, within the time allowed to disperse, with nobody admitted."
    )
    reads = frozenset({"attendance"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.attendance > law.PERMIT_THRESHOLD and s.dispersing

    def measure(self, s: Situation, subject: str | None) -> Condition:
        observed = {"attendance": s.attendance, **_after_end(s)}
        _split(observed, s)
        until = observed.get("allowance_until")
        return Condition(
            observed,
            {"attendance_at_most": law.PERMIT_THRESHOLD, "dispersed_by": until},
            s.attendance,
        )

    def edges(self, s: Situation) -> Iterable[int]:
        return (law.PERMIT_THRESHOLD,) if s.dispersing else ()

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        n = _n(o["attendance"])
        if o["attendance"] <= law.PERMIT_THRESHOLD or "ended_at" not in o:
            return f"{n} persons present: not more than 500 ({self.cite})"
        ended = _ENDED.get(o.get("ended_by", ""), "the permit stopped")
        what = f"{ended} at {clock_of(o['ended_at'])}"
        until = r.get("dispersed_by") or o.get("allowance_until")
        by = f"; more than 500 may remain until {clock_of(until)}" if until else ""
        return f"{n} persons leaving after {what}{by}, and no one may be admitted ({self.cite})"


class MaxAtOneTime(Rule):
    name = "max-at-one-time"
    severity = "breach"
    cite = f"{law.CITE_THRESHOLD}, permit:B(2)"
    title = "Attendance above the permitted maximum"
    summary = (
        "More persons present than the application's expected maximum at one time "
        "(permit:B(2)): the assembly the permit authorised (permit:A)."
    )
    reads = frozenset({"attendance"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.attendance > s.terms.max_at_one_time

    def measure(self, s: Situation, subject: str | None) -> Condition:
        most = s.terms.max_at_one_time
        observed: dict[str, Any] = {"attendance": s.attendance}
        _split(observed, s)
        return Condition(observed, {"attendance_at_most": most}, s.attendance - most)

    def edges(self, s: Situation) -> Iterable[int]:
        return (s.terms.max_at_one_time,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['attendance'])} persons present; the permit allows "
            f"{_n(r['attendance_at_most'])} at one time ({self.cite})"
        )


class MaxCollective(Rule):
    name = "max-collective"
    severity = "warning"
    cite = "permit:B(2)"
    title = "Entries above the expected total"
    summary = (
        "More gate entries than the application's expected maximum collectively "
        "(permit:B(2)). A warning because entries are not persons: a person who leaves and "
        "comes back enters twice."
    )
    reads = frozenset({"attendance"})

    def holds(self, s: Situation, subject: str | None) -> bool:
        return s.counts.entries > s.terms.max_collective

    def measure(self, s: Situation, subject: str | None) -> Condition:
        entries, most = s.counts.entries, s.terms.max_collective
        return Condition({"entries": entries}, {"entries_at_most": most}, entries - most)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"{_n(o['entries'])} entries through the gates; the application expects "
            f"{_n(r['entries_at_most'])} persons collectively (entries are not persons: one "
            f"who leaves and comes back enters twice) ({self.cite})"
        )
