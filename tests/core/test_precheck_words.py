"""Pre-event findings and permit-file problems word for word, as `kent-ops permit check`
prints them: the id, the severity, the cite and the sentence a clerk reads."""

from __future__ import annotations

from typing import Any

import pytest
from core_support import DELETE, local, permit_text, permit_variant

from kent_ops.core.permit import PermitError, parse_permit
from kent_ops.core.precheck import PreEventFinding, pre_event_findings

CASES: dict[str, tuple[dict[str, Any], list[PreEventFinding]]] = {
    "fee": (
        {"fee.paid_on": DELETE},
        [PreEventFinding("fee-paid", "breach", "fee", "the application fee has not been paid")],
    ),
    "health": (
        {"facilities.toilets_approved": False, "facilities.water_approved": False},
        [PreEventFinding("health-approvals", "breach", "permit:C(1)-(5)",
                         "no written approval for water (C(1)), toilets (C(2))")],
    ),
    "no-agent": (
        {"applicant.agent": DELETE},
        [PreEventFinding("nonresident-agent", "breach", "permit:B(1)",
                         "the applicant does not reside in the Town and names no agent")],
    ),
    "agent-elsewhere": (
        {"applicant.agent": {"name": "J. Doe", "address": "1 Main St, Beacon NY",
                             "county": "Dutchess"}},
        [PreEventFinding("nonresident-agent", "breach", "permit:B(1)",
                         "the agent J. Doe is in Dutchess County; the agent must reside or "
                         "have a place of business in Putnam County")],
    ),
    "past-midnight": (
        {"windows": [{"start": local(20), "end": local(3, day=5)}]},
        [
            PreEventFinding("application-contents", "breach", "permit:B(14)",
                            "the application does not include B(14), a statement of the "
                            "housing for an assembly running from one day into another"),
            PreEventFinding("overnight-housing", "breach", "permit:B(14), permit:C(7)",
                            "the assembly is permitted past a local midnight and no housing "
                            "is declared"),
        ],
    ),
    "no-decision-date": (
        {"permit.decided_on": DELETE},
        [PreEventFinding("decision-time", "warning", "permit:B",
                         "the permit is issued with no decision date")],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_each_pre_event_finding_in_its_words(case: str) -> None:
    changes, expected = CASES[case]
    assert pre_event_findings(permit_variant(changes)) == expected


def test_an_issued_permit_without_its_number_is_invalid_in_one_sentence() -> None:
    with pytest.raises(PermitError) as caught:
        parse_permit(permit_text({"permit.number": DELETE}))
    assert str(caught.value) == (
        "permit is invalid: permit.number: an issued permit needs its number (permit:A)"
    )
