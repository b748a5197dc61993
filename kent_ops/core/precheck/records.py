"""Pre-event warnings for what the Town's own file leaves out: ``not-on-record``.

The filing date, the hearing's dates, the Board's decision and bond amount, the
application's statements and the written approvals are facts the Town keeps. A permit
file that leaves one out says nothing about the applicant: it is a warning naming what
is missing and what cannot be checked without it, never the applicant's breach (an
explicit ``false`` is the breach). Files written before a field existed keep loading,
with these warnings (docs/law.md, "Not on record").
"""

from __future__ import annotations

from kent_ops.core import ordinance as law
from kent_ops.core.permit import CITE_APPLICANT, STATEMENTS, Permit
from kent_ops.core.precheck.base import (
    PreEventFinding,
    approvals_needed,
    statement_applies,
    warning,
)

__all__ = ["not_on_record"]


def _missing(what: str, unchecked: str, cite: str) -> PreEventFinding:
    return warning("not-on-record", cite, f"{what} is not on record, so {unchecked}")


def _missing_town_records(permit: Permit) -> list[PreEventFinding]:
    p, out = permit, []
    if p.application_filed_on is None:
        out.append(
            _missing(
                "the application's filing date (permit.application_filed_on)",
                "the 60 days' lead time, the Board's 30 days and the fee's timing cannot be "
                "checked",
                law.CITE_APPLICATION,
            )
        )
    if p.hearing_notice_published_on is None:
        out.append(
            _missing(
                "the hearing notice's publication date (permit.hearing_notice_published_on)",
                "the 10 days' notice cannot be checked",
                law.CITE_APPLICATION,
            )
        )
    if p.hearing_on is None:
        out.append(
            _missing(
                "the public hearing's date (permit.hearing_on)",
                "the notice and the order of the Board's steps cannot be checked",
                law.CITE_APPLICATION,
            )
        )
    if p.decided_on is None and p.status in ("issued", "denied", "revoked"):
        out.append(
            _missing(
                "the Board's decision date (permit.decided_on)",
                "the Board's 30 days cannot be checked",
                law.CITE_APPLICATION,
            )
        )
    posted = p.bond_amount > 0 and p.bond_posted_on is not None
    if posted and p.bond_amount_fixed_by_board is None:
        out.append(
            _missing(
                "the bond amount the Town Board fixed (bond.amount_fixed_by_board)",
                f"the ${p.bond_amount:,} posted cannot be checked against it",
                law.CITE_CLEAN_UP,
            )
        )
    return out


def _missing_application(permit: Permit) -> list[PreEventFinding]:
    if not permit.application_on_record:
        return [
            _missing(
                "the application's statements ([application])",
                "whether the petition includes what permit:B(1)-(14) asks cannot be checked",
                "permit:B(1)-(14)",
            )
        ]
    out = []
    for st in STATEMENTS:
        needed = statement_applies(permit, st) or (
            st.key == "agent_accepts_service" and not permit.resides_in_town
        )
        if needed and permit.application.get(st.key) is None:
            out.append(
                _missing(
                    f"application.{st.key}",
                    f"whether the application includes {st.item}, {st.text}, cannot be checked",
                    st.cite,
                )
            )
    agent = permit.agent
    if not permit.resides_in_town and agent is not None and agent.natural_person is None:
        out.append(
            _missing(
                "applicant.agent.natural_person",
                f"whether the agent {agent.name} is a natural person cannot be checked",
                CITE_APPLICANT,
            )
        )
    return out


def _missing_approvals(permit: Permit) -> list[PreEventFinding]:
    key = {"access roads": "roads", "medical facilities": "medical"}
    return [
        _missing(
            f"facilities.{key.get(name, name)}_approved",
            f"the written approval of {name} (permit:{item}) cannot be checked",
            f"permit:{item}",
        )
        for name, item, ok in approvals_needed(permit)
        if ok is None
    ]


def not_on_record(permit: Permit) -> list[PreEventFinding]:
    """Facts the Town keeps that the file leaves out: a warning naming what cannot be
    checked without each, never the applicant's breach."""
    return [
        *_missing_town_records(permit),
        *_missing_application(permit),
        *_missing_approvals(permit),
    ]
