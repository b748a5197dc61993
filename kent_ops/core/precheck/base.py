"""What a pre-event finding is, and the facts about a permit the checks share.

:mod:`kent_ops.core.precheck` holds the checks of the applicant's and owner's duties and
the Town's; :mod:`kent_ops.core.precheck.records` the warnings for what the Town's own
file leaves out. Both build :class:`PreEventFinding` from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from kent_ops.core.permit import Permit, Statement, local_midnight_after

__all__ = [
    "ASK_OVERNIGHT",
    "CONDITIONS_OF_ISSUING",
    "PreEventFinding",
    "Severity",
    "approvals_needed",
    "board_issued",
    "breach",
    "condition",
    "first_day",
    "night_only_by_dates",
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
    to_board: bool = False
    """A condition of issuing the permit that the Board issued it without: a warning
    addressed to the Board, never the applicant's breach (see :func:`condition`)."""

    def line(self) -> str:
        """``BREACH|WARNING <id> (<cite>): <sentence>``, as ``kent-ops permit check`` prints."""
        return f"{self.severity.upper()} {self.id} ({self.cite}): {self.message}"


def breach(rule: str, cite: str, message: str) -> PreEventFinding:
    return PreEventFinding(rule, "breach", cite, message)


def warning(rule: str, cite: str, message: str) -> PreEventFinding:
    return PreEventFinding(rule, "warning", cite, message)


CONDITIONS_OF_ISSUING = frozenset(
    {
        "application-lead-time",
        "application-contents",
        "nonresident-agent",
        "health-approvals",
        "inspection-authorization",
        "insurance-limits",
        "medical-plan",
        "parking-capacity",
        "fee-paid",
    }
)
"""The findings that are conditions of issuing the permit: "No permit shall be issued
unless …" (permit:C, D, E), the petition of permit:B and its fee. Once the Board has
issued the permit, each is the Board's to answer for (docs/law.md, "The Board's
conditions are the Board's")."""

ASK_OVERNIGHT = "ask whether anyone stays overnight"
"""What a clerk does about windows on several dates that each close before midnight."""


def board_issued(permit: Permit) -> bool:
    """The Board issued the permit: its status is ``issued``, or the file records a
    revocation (a permit is issued until its ``revoked_at``)."""
    return permit.status == "issued" or permit.revoked_at is not None


def condition(permit: Permit, rule: str, cite: str, message: str) -> PreEventFinding:
    """A condition of issuing the permit not shown: the applicant's breach while the
    permit is not issued (the Board may not issue it yet); once the Board has issued it,
    a warning addressed to the Board ("the Board issued the permit though …")."""
    if board_issued(permit):
        return PreEventFinding(
            rule, "warning", cite, f"the Board issued the permit though {message}", True
        )
    return breach(rule, cite, message)


def night_only_by_dates(permit: Permit) -> bool:
    """Housing is asked only because the windows fall on two or more local dates, each
    closing by midnight, and the file does not say anyone stays overnight: the night is
    possible, not contemplated (permit:B(14), C(7); docs/law.md, "Overnight")."""
    if permit.overnight or not permit.may_run_overnight:
        return False
    tz = permit.timezone
    return not any(local_midnight_after(w.start, tz) < w.end for w in permit.windows)


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
