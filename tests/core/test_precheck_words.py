"""Pre-event findings and permit-file problems word for word, as `kent-ops permit check`
prints them: the id, the severity, the cite and the sentence a clerk reads.

The example permit is issued, so a condition of issuing it reads as the Board's warning;
the cases marked pending are the applicant's breaches."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from core_support import DELETE, local, permit_text, permit_variant

from kent_ops.core.permit import PermitError, parse_permit
from kent_ops.core.precheck import PreEventFinding, pre_event_findings

CASES: dict[str, tuple[dict[str, Any], list[PreEventFinding]]] = {
    "fee": (
        {"fee.paid_on": DELETE},
        [PreEventFinding("fee-paid", "warning", "fee",
                         "the Board issued the permit though the application fee has not been "
                         "paid", True)],
    ),
    "fee-pending": (
        {"fee.paid_on": DELETE, "permit.status": "pending"},
        [
            PreEventFinding("fee-paid", "breach", "fee", "the application fee has not been paid"),
            PreEventFinding("permit-not-issued", "warning", "permit:A",
                            "the permit's status is 'pending' and 4,000 persons are expected at "
                            "one time: no issued permit covers an assembly of more than 500; "
                            "holding one would be permit-required, which only attendance "
                            "counted live shows"),
        ],
    ),
    "health": (
        {"facilities.toilets_approved": False, "facilities.water_approved": False},
        [PreEventFinding("health-approvals", "warning", "permit:C(1)-(9)",
                         "the Board issued the permit though there is no written approval for "
                         "water (C(1)), toilets (C(2))", True)],
    ),
    "no-agent": (
        {"applicant.agent": DELETE, "permit.status": "pending"},
        [
            PreEventFinding("nonresident-agent", "breach", "permit:B(1)",
                            "the applicant does not reside in the Town and names no agent"),
            PreEventFinding("permit-not-issued", "warning", "permit:A",
                            "the permit's status is 'pending' and 4,000 persons are expected at "
                            "one time: no issued permit covers an assembly of more than 500; "
                            "holding one would be permit-required, which only attendance "
                            "counted live shows"),
        ],
    ),
    "agent-elsewhere": (
        {"applicant.agent": {"name": "J. Doe", "address": "1 Main St, Beacon NY",
                             "county": "Dutchess", "natural_person": True}},
        [PreEventFinding("nonresident-agent", "warning", "permit:B(1)",
                         "the Board issued the permit though the agent J. Doe is in Dutchess "
                         "County; the agent must reside or have a place of business in Putnam "
                         "County", True)],
    ),
    "past-midnight": (
        {"windows": [{"start": local(20), "end": local(3, day=5)}]},
        [
            PreEventFinding("overnight-housing", "breach", "permit:B(14), permit:C(7)",
                            "the assembly is permitted past a local midnight and no housing "
                            "is declared"),
            PreEventFinding("application-contents", "warning", "permit:B(14)",
                            "the Board issued the permit though the application does not "
                            "include B(14), a statement of the housing for an assembly running "
                            "from one day into another", True),
        ],
    ),
    "no-decision-date": (
        {"permit.decided_on": DELETE},
        [PreEventFinding("not-on-record", "warning", "permit:B",
                         "the Board's decision date (permit.decided_on) is not on record, so "
                         "the Board's 30 days cannot be checked")],
    ),
    "agent-not-a-person": (
        {"applicant.agent.natural_person": False},
        [PreEventFinding("nonresident-agent", "warning", "permit:B(1)",
                         "the Board issued the permit though the agent J. Doe is not a natural "
                         "person", True)],
    ),
    "no-food-plan": (
        {"application.food_plan": False},
        [PreEventFinding("application-contents", "warning", "permit:B(7)",
                         "the Board issued the permit though the application does not include "
                         "B(7), a plan to scale of the buildings or structures where food is "
                         "prepared, sold or distributed", True)],
    ),
    "no-food-no-plan-needed": (
        {"application.food_plan": False, "facilities.food_served": False},
        [],
    ),
    "roads-refused": (
        {"facilities.roads_approved": False, "facilities.medical_approved": False},
        [PreEventFinding("health-approvals", "warning", "permit:C(1)-(9)",
                         "the Board issued the permit though there is no written approval for "
                         "access roads (C(8)), medical facilities (C(9))", True)],
    ),
    "bond-late": (
        {"bond.posted_on": date(2027, 7, 5)},
        [PreEventFinding("bond-posted", "warning", "permit:F",
                         "the bond was posted 2027-07-05, after the assembly began on "
                         "2027-07-04 (the law sets no time for it)")],
    ),
    "bond-short": (
        {"bond.amount": 9999},
        [PreEventFinding("bond-posted", "breach", "permit:F",
                         "the bond is $9,999; the Town Board fixed $10,000")],
    ),
    "no-board-amount": (
        {"bond.amount_fixed_by_board": DELETE},
        [PreEventFinding("not-on-record", "warning", "permit:F",
                         "the bond amount the Town Board fixed (bond.amount_fixed_by_board) "
                         "is not on record, so the $10,000 posted cannot be checked against "
                         "it")],
    ),
    "no-filing-date": (
        {"permit.application_filed_on": DELETE},
        [PreEventFinding("not-on-record", "warning", "permit:B",
                         "the application's filing date (permit.application_filed_on) is not "
                         "on record, so the 60 days' lead time, the Board's 30 days and the "
                         "fee's timing cannot be checked")],
    ),
    "two-dates": (
        {"windows": [{"start": local(10), "end": local(23)},
                     {"start": local(10, day=5), "end": local(23, day=5)}]},
        [
            PreEventFinding("application-contents", "warning", "permit:B(14)",
                            "the Board issued the permit though the application does not "
                            "include B(14), a statement of the housing for an assembly running "
                            "from one day into another; the assembly is permitted on 2 local "
                            "dates, each window closing by midnight: ask whether anyone stays "
                            "overnight", True),
            PreEventFinding("overnight-housing", "warning", "permit:B(14), permit:C(7)",
                            "the assembly is permitted on 2 local dates, each window closing by "
                            "midnight, and no housing is declared: ask whether anyone stays "
                            "overnight"),
        ],
    ),
    "revoked-before": (
        {"permit.revoked_at": local(9), "permit.revocation_resolution": "TB-2027-30"},
        [PreEventFinding("permit-not-issued", "warning", "permit:A",
                         "the permit was revoked at 2027-07-04T09:00:00-04:00, before the "
                         "first permitted window opened, and 4,000 persons are expected at "
                         "one time: no issued permit covers an assembly of more than 500; "
                         "holding one would be permit-required, which only attendance "
                         "counted live shows")],
    ),
    "revoked-during": (
        {"permit.status": "revoked", "permit.revoked_at": local(15),
         "permit.revocation_resolution": "TB-2027-41"},
        [PreEventFinding("permit-revoked", "warning", "permit:G",
                         "the Town Board revoked the permit by resolution TB-2027-41 at "
                         "2027-07-04T15:00:00-04:00: it was issued until then")],
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
