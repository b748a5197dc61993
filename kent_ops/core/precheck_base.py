"""What a pre-event finding is, and the facts about a permit the checks share.

:mod:`kent_ops.core.precheck` holds the checks of the applicant's and owner's duties and
the Town's; :mod:`kent_ops.core.precheck_records` the warnings for what the Town's own
file leaves out. Both build :class:`PreEventFinding` from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from kent_ops.core.permit import Permit
from kent_ops.core.permit_schema import Statement

__all__ = [
    "PreEventFinding",
    "Severity",
    "approvals_needed",
    "breach",
    "first_day",
    "statement_applies",
    "warning",
]

Severity = Literal["breach", "warning"]


@dataclass(frozen=True, slots=True)
class PreEventFinding:
    """One thing the permit file shows is not as the ordinance requires."""

    id: str
    severity: Severity
    cite: str
    message: str

    def line(self) -> str:
        """``BREACH|WARNING <id> (<cite>): <sentence>``, as ``kent-ops permit check`` prints."""
        return f"{self.severity.upper()} {self.id} ({self.cite}): {self.message}"


def breach(rule: str, cite: str, message: str) -> PreEventFinding:
    return PreEventFinding(rule, "breach", cite, message)


def warning(rule: str, cite: str, message: str) -> PreEventFinding:
    return PreEventFinding(rule, "warning", cite, message)


def first_day(permit: Permit) -> date:
    """The local date the assembly is first permitted to begin."""
    return permit.first_start.astimezone(permit.timezone).date()


def statement_applies(permit: Permit, st: Statement) -> bool:
    """Whether the petition must include ``st`` for this assembly (permit:B)."""
    if st.key == "agent_accepts_service":
        return False  # only a non-resident needs an agent: see nonresident_agent
    if st.item == "B(14)":
        return permit.may_run_overnight
    if st.key == "food_plan":
        return permit.food_served  # "If food or beverage is to be prepared, sold and distributed"
    return True


def approvals_needed(permit: Permit) -> tuple[tuple[str, str, bool | None], ...]:
    """Each written approval of permit:C(1)-(9) this permit needs: (name, item, given).

    Housing (C(7)) only where the assembly may extend from one day to another.
    """
    needed = (
        ("water", "C(1)", permit.water_approved),
        ("toilets", "C(2)", permit.toilets_approved),
        ("sewage", "C(3)", permit.sewage_approved),
        ("food", "C(5)", permit.food_approved),
        ("parking", "C(6)", permit.parking_approved),
        ("housing", "C(7)", permit.housing_approved),
        ("access roads", "C(8)", permit.roads_approved),
        ("medical facilities", "C(9)", permit.medical_approved),
    )
    return tuple(n for n in needed if n[1] != "C(7)" or permit.may_run_overnight)
