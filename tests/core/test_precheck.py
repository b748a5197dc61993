"""Pre-event findings: what the permit file itself shows, before the gates open.

Every finding of the law's "before" list, at its boundary. A condition of issuing the
permit is a breach by the applicant or owner while the permit is pending, and a warning
addressed to the Board once it has issued it; planning an assembly without a permit is
a warning; so are the Town's own duties (notice, decision, order, revocation) and
housing asked only because the windows fall on several dates. ``kent-ops permit
check`` is run as a subprocess for its output and exit codes.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_support import Ran, kent_ops
from core_support import (
    DELETE,
    EXAMPLE_PATH,
    NY,
    WINDOW_START,
    permit_text,
    permit_variant,
    to_toml,
)

from kent_ops.core.permit import parse_permit
from kent_ops.core.permit.schema import STATEMENTS
from kent_ops.core.precheck import PreEventFinding, pre_event_findings

TWO_PATH = EXAMPLE_PATH.parent / "permit-two-properties.toml"
FIRST_DAY = date(2027, 7, 4)
PENDING: dict[str, Any] = {"permit.status": "pending"}
"""The Board has not issued the permit yet: a condition of issuing not shown is the
applicant's breach (the example permit is issued: then it is the Board's warning)."""


def findings(changes: dict[str, Any] | None = None) -> list[PreEventFinding]:
    return pre_event_findings(permit_variant(changes))


def of(rule: str, changes: dict[str, Any] | None = None) -> list[PreEventFinding]:
    return [f for f in findings(changes) if f.id == rule]


def one(rule: str, changes: dict[str, Any]) -> PreEventFinding:
    found = of(rule, changes)
    assert len(found) == 1, found
    return found[0]


def test_the_example_permit_has_no_findings() -> None:
    assert findings() == []


def test_the_three_property_example_has_no_findings() -> None:
    assert pre_event_findings(parse_permit(TWO_PATH.read_text())) == []


def test_a_finding_prints_as_one_line() -> None:
    f = PreEventFinding("fee-paid", "breach", "fee", "the application fee has not been paid")
    assert f.line() == "BREACH fee-paid (fee): the application fee has not been paid"
    assert PreEventFinding("x", "warning", "permit:B", "y").line() == "WARNING x (permit:B): y"


# -- permit-not-issued ---------------------------------------------------------------------


def _at_most(n: int, status: str) -> dict[str, Any]:
    return {
        "permit.status": status,
        "limits.max_at_one_time": n,
        "alerting.hold_at": DELETE,
        "alerting.resume_below": DELETE,
    }


@pytest.mark.parametrize("status", ["pending", "denied", "revoked", "none"])
def test_more_than_500_without_an_issued_permit_is_a_warning_planning_is_no_offence(
    status: str,
) -> None:
    f = one("permit-not-issued", _at_most(501, status))
    assert (f.severity, f.cite) == ("warning", "permit:A")
    assert f.message == (
        f"the permit's status is {status!r} and 501 persons are expected at one time: no "
        "issued permit covers an assembly of more than 500; holding one would be "
        "permit-required, which only attendance counted live shows"
    )


def test_500_need_no_permit() -> None:
    assert of("permit-not-issued", _at_most(500, "none")) == []


def test_an_issued_permit_is_not_a_finding() -> None:
    assert of("permit-not-issued", _at_most(501, "issued")) == []


# -- application-lead-time ---------------------------------------------------------------


def test_filed_60_days_before_is_in_time() -> None:
    filed = FIRST_DAY - timedelta(days=60)
    assert of("application-lead-time", {"permit.application_filed_on": filed}) == []


def test_filed_59_days_before_a_pending_permit_is_the_applicants_breach() -> None:
    filed = FIRST_DAY - timedelta(days=59)
    f = one("application-lead-time", {**PENDING, "permit.application_filed_on": filed})
    assert (f.severity, f.cite, f.to_board) == ("breach", "permit:B", False)
    assert f.message == (
        "the application was filed 2027-05-06, 59 days before the assembly on 2027-07-04; "
        "at least 60 are required"
    )


def test_a_permit_issued_on_a_59_day_filing_is_a_warning_to_the_board() -> None:
    filed = FIRST_DAY - timedelta(days=59)
    f = one("application-lead-time", {"permit.application_filed_on": filed})
    assert (f.severity, f.cite, f.to_board) == ("warning", "permit:B", True)
    assert f.line() == (
        "WARNING application-lead-time (permit:B): the Board issued the permit though the "
        "application was filed 2027-05-06, 59 days before the assembly on 2027-07-04; at "
        "least 60 are required"
    )
    in_time = {"permit.application_filed_on": FIRST_DAY - timedelta(days=60)}
    assert of("application-lead-time", in_time) == []


def test_a_file_that_records_a_revocation_was_issued_so_its_conditions_are_the_boards() -> None:
    at = datetime(2027, 7, 4, 15, 0, tzinfo=NY)
    changes = {"permit.status": "revoked", "permit.revoked_at": at, "fee": DELETE}
    f = one("fee-paid", changes)
    assert (f.severity, f.to_board) == ("warning", True)
    assert f.message == "the Board issued the permit though the application fee has not been paid"
    no_date = {"permit.status": "revoked", "fee": DELETE}
    assert one("fee-paid", no_date).severity == "breach"  # revoked, never shown issued


@pytest.mark.parametrize(
    "changes",
    [
        {"permit.application_filed_on": FIRST_DAY - timedelta(days=45)},
        {"lots": [{"id": "lot-a", "capacity": 999}]},
        {"staffing.nurses_planned": 7},
        {"application.site_map": False},
        {"applicant.agent": DELETE},
        {"insurance.property_damage": 200_000},
        {"facilities.inspection_authorized": False},
        {"facilities.water_approved": False},
        {"fee": DELETE},
    ],
    ids=lambda c: next(iter(c)),
)
def test_every_condition_of_issuing_is_the_boards_once_issued_the_applicants_while_pending(
    changes: dict[str, Any],
) -> None:
    (issued,) = [f for f in findings(changes) if f.message.startswith("the Board issued")]
    assert (issued.severity, issued.to_board) == ("warning", True)
    assert issued.message.startswith("the Board issued the permit though ")
    pending = [f for f in findings({**PENDING, **changes}) if f.id == issued.id]
    assert [(f.severity, f.to_board) for f in pending] == [("breach", False)]
    assert issued.message == "the Board issued the permit though " + pending[0].message


def test_the_bond_is_no_condition_of_issuing_and_stays_a_breach_once_issued() -> None:
    f = one("bond-posted", {"bond.amount": 9_999})
    assert (f.severity, f.to_board) == ("breach", False)


def test_no_filing_date_is_the_towns_record_missing_not_a_late_filing() -> None:
    assert of("application-lead-time", {"permit.application_filed_on": DELETE}) == []
    f = one("not-on-record", {"permit.application_filed_on": DELETE})
    assert f.severity == "warning"
    assert "filing date" in f.message


# -- parking-capacity -------------------------------------------------------------------------


def test_parking_for_one_car_per_four_persons_is_enough() -> None:
    assert of("parking-capacity", {"lots": [{"id": "lot-a", "capacity": 1000}]}) == []


def test_one_space_short_is_a_breach() -> None:
    f = one("parking-capacity", {**PENDING, "lots": [{"id": "lot-a", "capacity": 999}]})
    assert (f.severity, f.cite) == ("breach", "permit:C(6)")
    assert "999" in f.message
    assert "1,000" in f.message


# -- medical-plan ---------------------------------------------------------------------------------


def test_the_planned_nurses_must_cover_the_maximum() -> None:
    assert of("medical-plan", {"staffing.nurses_planned": 8}) == []
    f = one("medical-plan", {**PENDING, "staffing.nurses_planned": 7})
    assert (f.severity, f.cite) == ("breach", "permit:C(9)")
    assert "7 registered nurses planned, 8 required" in f.message


def test_a_stricter_ratio_needs_more_planned_nurses() -> None:
    f = one("medical-plan", {"staffing.persons_per_nurse": 250})
    assert "8 registered nurses planned, 16 required" in f.message


def test_fewer_planned_doctors_than_the_minimum_is_a_breach() -> None:
    assert "0 doctors planned" in one("medical-plan", {"staffing.doctors_planned": 0}).message
    assert of("medical-plan", {"staffing.doctors_min": 2, "staffing.doctors_planned": 2}) == []
    f = one("medical-plan", {"staffing.doctors_min": 3, "staffing.doctors_planned": 2})
    assert "at least 3" in f.message


def test_no_first_aid_station_is_a_breach() -> None:
    f = one("medical-plan", {**PENDING, "staffing.first_aid_station": False})
    assert f.message == "the medical plan falls short: no first-aid station is shown"


def test_missing_planned_figures_count_as_not_shown() -> None:
    f = one(
        "medical-plan",
        {"staffing.doctors_planned": DELETE, "staffing.nurses_planned": DELETE},
    )
    assert "no planned number of doctors" in f.message
    assert "no planned number of registered nurses" in f.message


# -- application-contents ---------------------------------------------------------------------


def test_a_statement_not_filed_is_named_with_its_item() -> None:
    f = one("application-contents", {**PENDING, "application.site_map": False})
    assert (f.severity, f.cite) == ("breach", "permit:B(3)")
    assert "B(3)" in f.message


def test_each_statement_not_filed_is_its_own_finding() -> None:
    keys = [st.key for st in STATEMENTS]
    found = of("application-contents", {f"application.{k}": False for k in keys})
    items = [f.cite for f in found]
    assert items == [
        "permit:B(1)",
        "permit:B(2)",
        "permit:B(3)",
        "permit:B(4)",
        "permit:B(5)",
        "permit:B(6)",
        "permit:B(7)",
        "permit:B(7)",
        "permit:B(8)",
        "permit:B(10)",
        "permit:B(11)",
        "permit:B(12)",
        "permit:B(13)",
    ]  # no B(14): this assembly ends before midnight


def test_an_application_the_file_leaves_out_is_not_on_record_never_a_breach() -> None:
    assert of("application-contents", {"application": DELETE}) == []
    (f,) = of("not-on-record", {"application": DELETE})
    assert (f.severity, f.cite) == ("warning", "permit:B(1)-(14)")
    permit = permit_variant({"application": DELETE})
    assert not any(x.severity == "breach" for x in pre_event_findings(permit))


def test_the_housing_statement_is_needed_only_past_midnight() -> None:
    assert of("application-contents", {"application.housing_statement": False}) == []
    late = {"start": WINDOW_START, "end": datetime(2027, 7, 5, 1, 0, tzinfo=NY)}
    changes = {"windows": [late], "facilities.housing_declared": True}
    f = one("application-contents", changes)
    assert f.cite == "permit:B(14)"
    assert of("application-contents", {**changes, "application.housing_statement": True}) == []


def test_the_agents_agreement_is_not_an_application_contents_finding() -> None:
    changes = {"application.agent_accepts_service": False}
    assert of("application-contents", changes) == []
    assert "verified statement" in one("nonresident-agent", changes).message


# -- nonresident-agent ---------------------------------------------------------------------------


def test_a_nonresident_without_an_agent_is_a_breach() -> None:
    f = one("nonresident-agent", {**PENDING, "applicant.agent": DELETE})
    assert (f.severity, f.cite) == ("breach", "permit:B(1)")


def test_an_agent_outside_putnam_is_a_breach() -> None:
    agent = {"name": "J. Doe", "address": "1 Main St, Beacon NY", "county": "Dutchess"}
    assert "Dutchess" in one("nonresident-agent", {"applicant.agent": agent}).message


def test_an_agent_in_putnam_county_is_enough() -> None:
    agent = {"name": "J. Doe", "address": "12 Main St, Carmel NY", "county": "Putnam County"}
    assert of("nonresident-agent", {"applicant.agent": agent}) == []


def test_a_resident_needs_no_agent() -> None:
    changes = {
        "applicant.resides_in_town": True,
        "applicant.agent": DELETE,
        "application.agent_accepts_service": False,
    }
    assert of("nonresident-agent", changes) == []


# -- insurance, inspection, health -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("insurance.bodily_injury_per_person", 249_999, "$249,999 per person"),
        ("insurance.bodily_injury_per_occurrence", 499_999, "$499,999 per occurrence"),
        ("insurance.property_damage", 249_999, "property damage $249,999"),
        ("insurance.cancellation_notice_days", 9, "9 days' notice"),
    ],
)
def test_insurance_below_the_law_is_a_breach(field: str, value: int, words: str) -> None:
    f = one("insurance-limits", {**PENDING, field: value})
    assert (f.severity, f.cite) == ("breach", "permit:E")
    assert words in f.message


def test_no_inspection_authorization_from_the_owner_is_a_breach() -> None:
    f = one("inspection-authorization", {**PENDING, "facilities.inspection_authorized": False})
    assert (f.severity, f.cite) == ("breach", "permit:D")
    assert "R. Smith" in f.message


def test_the_tenants_authorization_is_needed_too() -> None:
    changes = {"property.tenant": "Kent Fair Inc."}
    f = one("inspection-authorization", changes)
    assert "tenant Kent Fair Inc." in f.message
    assert "R. Smith" not in f.message
    assert of("inspection-authorization", {**changes, "property.tenant_authorized": True}) == []


def test_each_property_of_several_is_checked() -> None:
    data = tomllib.loads(TWO_PATH.read_text())
    data["properties"][2]["tenant_authorized"] = False
    data["properties"][1]["inspection_authorized"] = False
    found = [
        f for f in pre_event_findings(parse_permit(to_toml(data)))
        if f.id == "inspection-authorization"
    ]  # fmt: skip
    assert len(found) == 2
    assert "overflow-parking" in found[0].message
    assert "T. Alvarez" in found[0].message
    assert "camping-meadow" in found[1].message
    assert "Lakeside Camping Co." in found[1].message


@pytest.mark.parametrize(
    ("field", "name"),
    [
        ("facilities.water_approved", "water"),
        ("facilities.toilets_approved", "toilets"),
        ("facilities.sewage_approved", "sewage"),
        ("facilities.food_approved", "food"),
    ],
)
def test_a_missing_health_approval_is_a_breach(field: str, name: str) -> None:
    f = one("health-approvals", {**PENDING, field: False})
    assert f.severity == "breach"
    assert name in f.message


def test_food_approval_is_needed_even_when_no_food_is_served() -> None:
    changes = {"facilities.food_approved": False, "facilities.food_served": False}
    assert "food" in one("health-approvals", changes).message


# -- bond, fee, housing --------------------------------------------------------------------------


def test_a_bond_one_dollar_short_of_the_boards_amount_is_a_breach() -> None:
    f = one("bond-posted", {"bond.amount": 9_999})
    assert (f.severity, f.cite) == ("breach", "permit:F")
    assert "$9,999" in f.message
    assert "$10,000" in f.message


def test_a_bond_of_the_boards_amount_or_more_is_enough() -> None:
    assert of("bond-posted", {"bond.amount": 10_001}) == []


def test_no_bond_is_a_breach() -> None:
    assert "no clean-up bond" in one("bond-posted", {"bond": DELETE}).message


def test_a_bond_without_the_boards_amount_is_not_on_record() -> None:
    assert of("bond-posted", {"bond.amount_fixed_by_board": DELETE}) == []
    f = one("not-on-record", {"bond.amount_fixed_by_board": DELETE})
    assert "cannot be checked against it" in f.message


def test_a_bond_posted_after_the_assembly_began_is_a_warning() -> None:
    assert of("bond-posted", {"bond.posted_on": FIRST_DAY}) == []
    f = one("bond-posted", {"bond.posted_on": FIRST_DAY + timedelta(days=1)})
    assert f.severity == "warning"
    assert "after the assembly began" in f.message


def test_the_fee_is_paid_with_the_application() -> None:
    assert of("fee-paid", {"fee.paid_on": date(2027, 3, 30)}) == []
    f = one("fee-paid", {**PENDING, "fee.paid_on": date(2027, 4, 2)})
    assert (f.severity, f.cite) == ("breach", "fee")
    assert "the application fee has not been paid" in one("fee-paid", {"fee": DELETE}).message


def test_declared_overnight_without_housing_is_a_breach() -> None:
    f = one("overnight-housing", {"facilities.overnight": True})
    assert (f.severity, f.cite) == ("breach", "permit:B(14), permit:C(7)")


def test_a_window_past_midnight_without_housing_is_a_breach() -> None:
    late = {"start": WINDOW_START, "end": datetime(2027, 7, 5, 0, 30, tzinfo=NY)}
    assert "midnight" in one("overnight-housing", {"windows": [late]}).message
    at_midnight = {"start": WINDOW_START, "end": datetime(2027, 7, 5, 0, 0, tzinfo=NY)}
    assert of("overnight-housing", {"windows": [at_midnight]}) == []


def _day(day: int, start: int, end_day: int, end: int) -> dict[str, datetime]:
    return {
        "start": datetime(2027, 7, day, start, 0, tzinfo=NY),
        "end": datetime(2027, 7, end_day, end, 0, tzinfo=NY),
    }


ASK = (
    "the assembly is permitted on 2 local dates, each window closing by midnight: ask "
    "whether anyone stays overnight"
)


@pytest.mark.parametrize("status", ["issued", "pending"])
def test_two_dates_each_closing_before_midnight_only_ask_whether_anyone_stays(
    status: str,
) -> None:
    two = {
        "permit.status": status,
        "windows": [_day(4, 10, 4, 23), _day(5, 10, 5, 23)],
        "application.housing_statement": False,
        "facilities.housing_approved": False,
    }
    found = {f.id: f for f in findings(two) if f.id != "permit-not-issued"}
    assert [f.severity for f in found.values()] == ["warning"] * 3
    board = "the Board issued the permit though " if status == "issued" else ""
    assert found["overnight-housing"].message == (
        "the assembly is permitted on 2 local dates, each window closing by midnight, and no "
        "housing is declared: ask whether anyone stays overnight"
    )
    assert found["application-contents"].message == (
        f"{board}the application does not include B(14), a statement of the housing for an "
        f"assembly running from one day into another; {ASK}"
    )
    assert found["health-approvals"].message == (
        f"{board}there is no written approval for housing (C(7)); {ASK}"
    )
    ending_at_midnight = {**two, "windows": [_day(4, 10, 5, 0), _day(5, 10, 6, 0)]}
    assert {f.severity for f in findings(ending_at_midnight) if f.id != "permit-not-issued"} == {
        "warning"
    }


@pytest.mark.parametrize(
    "changes",
    [
        {"windows": [_day(4, 10, 4, 23), _day(5, 10, 6, 1)]},  # the second crosses midnight
        {"windows": [_day(4, 10, 4, 23), _day(5, 10, 5, 23)], "facilities.overnight": True},
    ],
    ids=["a-window-crosses-midnight", "declared-overnight"],
)
def test_a_night_contemplated_still_needs_housing_declared(changes: dict[str, Any]) -> None:
    pending = {**PENDING, **changes, "application.housing_statement": False}
    f = one("overnight-housing", pending)
    assert f.severity == "breach"
    assert "ask whether" not in f.message
    (statement,) = [x for x in of("application-contents", pending) if x.cite == "permit:B(14)"]
    assert statement.severity == "breach"


def test_a_refused_approval_beside_a_housing_question_stays_the_applicants_breach() -> None:
    two = {
        **PENDING,
        "windows": [_day(4, 10, 4, 23), _day(5, 10, 5, 23)],
        "facilities.housing_approved": False,
        "facilities.water_approved": False,
    }
    assert [(f.severity, f.message) for f in of("health-approvals", two)] == [
        ("breach", "there is no written approval for water (C(1))"),
        ("warning", f"there is no written approval for housing (C(7)); {ASK}"),
    ]


# -- the Town's duties: warnings -----------------------------------------------------------------


def test_notice_ten_days_before_the_hearing_is_enough() -> None:
    assert of("hearing-notice", {"permit.hearing_notice_published_on": date(2027, 4, 18)}) == []


def test_notice_nine_days_before_the_hearing_is_a_warning() -> None:
    f = one("hearing-notice", {"permit.hearing_notice_published_on": date(2027, 4, 19)})
    assert (f.severity, f.cite) == ("warning", "permit:B")
    assert "9 days" in f.message


def test_a_decision_30_days_after_filing_is_in_time() -> None:
    assert of("decision-time", {"permit.decided_on": date(2027, 5, 1)}) == []


def test_a_decision_31_days_after_filing_is_a_warning() -> None:
    f = one("decision-time", {"permit.decided_on": date(2027, 5, 2)})
    assert (f.severity, f.cite) == ("warning", "permit:B")
    assert "31 days" in f.message


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"permit.hearing_notice_published_on": date(2027, 4, 29)}, "after the hearing"),
        (
            {
                "permit.hearing_on": date(2027, 3, 31),
                "permit.hearing_notice_published_on": date(2027, 3, 15),
            },
            "before the application was filed",
        ),
        ({"permit.decided_on": date(2027, 4, 27)}, "before its public hearing"),
        ({"permit.decided_on": date(2027, 7, 5)}, "after the assembly was to begin"),
    ],
)
def test_each_step_out_of_order_is_a_warning(changes: dict[str, Any], words: str) -> None:
    f = one("procedure-order", changes)
    assert (f.severity, f.cite) == ("warning", "permit:B")
    assert words in f.message


def test_steps_on_the_same_day_are_in_order() -> None:
    changes = {
        "permit.hearing_notice_published_on": date(2027, 4, 1),
        "permit.hearing_on": date(2027, 4, 1),
        "permit.decided_on": date(2027, 4, 1),
    }
    assert of("procedure-order", changes) == []
    assert of("procedure-order", {"permit.decided_on": FIRST_DAY}) == []


def test_a_revocation_is_a_warning_naming_its_resolution() -> None:
    at = datetime(2027, 7, 4, 15, 0, tzinfo=NY)
    f = one(
        "permit-revoked",
        {"permit.revoked_at": at, "permit.revocation_resolution": "2027-41"},
    )
    assert (f.severity, f.cite) == ("warning", "permit:G")
    assert "2027-41" in f.message
    assert "2027-07-04T15:00:00-04:00" in f.message


def test_breaches_come_before_warnings() -> None:
    found = findings({"permit.decided_on": date(2027, 5, 2), "fee": DELETE})
    assert [f.id for f in found] == ["fee-paid", "decision-time"]


# -- kent-ops permit check --------------------------------------------------------------------

LINE = re.compile(r"^(BREACH|WARNING) [a-z-]+ \([^)]*(\([^)]*\)[^)]*)*\): \S.*$")


def check(capsys: pytest.CaptureFixture[str], path: Path) -> Ran:
    """``kent-ops permit check PATH``, in this process."""
    return kent_ops(capsys, "permit", "check", str(path))


def write(tmp_path: Path, changes: dict[str, Any]) -> Path:
    path = tmp_path / "permit.toml"
    path.write_text(permit_text(changes))
    return path


@pytest.mark.parametrize("path", [EXAMPLE_PATH, TWO_PATH])
def test_check_of_a_clean_permit_says_what_was_checked_and_exits_0(
    capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    done = check(capsys, path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OK no pre-event findings.\nChecked: the permit's status")
    assert "What remains to do on the day:" in done.stdout
    assert "meets every" not in done.stdout
    assert done.stderr == ""


def test_check_prints_one_finding_a_line_and_exits_1_on_a_breach(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    changes = {"bond.amount": 9_999, "permit.decided_on": date(2027, 5, 2), "fee": DELETE}
    done = check(capsys, write(tmp_path, changes))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "BREACH bond-posted (permit:F): the bond is $9,999; the Town Board fixed $10,000",
        "WARNING fee-paid (fee): the Board issued the permit though the application fee has "
        "not been paid",
        "WARNING decision-time (permit:B): decided 2027-05-02, 31 days after filing; "
        "the Board acts within 30",
    ]
    assert all(LINE.match(line) for line in done.stdout.splitlines())


def test_check_of_a_pending_permit_charges_the_applicant_with_its_conditions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done = check(capsys, write(tmp_path, {**PENDING, "fee": DELETE}))
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (
        "BREACH fee-paid (fee): the application fee has not been paid"
    )
    assert done.stdout.splitlines()[1].startswith("WARNING permit-not-issued (permit:A): ")


def test_check_exits_0_when_there_are_only_warnings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done = check(capsys, write(tmp_path, {"permit.hearing_notice_published_on": date(2027, 4, 19)}))
    assert done.returncode == 0
    (line,) = done.stdout.splitlines()
    assert line.startswith("WARNING hearing-notice (permit:B): ")


def test_check_of_an_invalid_permit_is_one_line_on_stderr_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, {"staffing.persons_per_nurs": 500, "staffing.doctors_min": 0})
    done = check(capsys, path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"kent-ops: {path} is invalid: staffing.persons_per_nurs: unknown field (did you "
        "mean persons_per_nurse?); staffing.doctors_min: 0 is looser than the ordinance's "
        "at least 1 doctor in attendance at all times (permit:C(9))\n"
    )


def test_check_of_a_missing_file_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    absent = tmp_path / "absent.toml"
    done = check(capsys, absent)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"kent-ops: permit file {absent}: no such file\n"


def test_the_entry_point_checks_a_permit_and_never_shows_a_traceback(tmp_path: Path) -> None:
    """The module a shell runs, once for a clean permit and once for an invalid one."""
    argv = [sys.executable, "-m", "kent_ops.commands.cli", "permit", "check"]
    clean = subprocess.run([*argv, str(EXAMPLE_PATH)], capture_output=True, text=True, timeout=60)
    assert (clean.returncode, clean.stderr) == (0, "")
    assert clean.stdout.startswith("OK no pre-event findings.\n")
    invalid = write(tmp_path, {"staffing.persons_per_nurs": 500})
    done = subprocess.run([*argv, str(invalid)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"kent-ops: {invalid} is invalid: staffing.persons_per_nurs: ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("status", ["none", "issued", "pending"])
def test_check_of_an_assembly_of_500_or_fewer_needs_no_permit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, status: str
) -> None:
    limits = {"limits.max_at_one_time": 499, "alerting.hold_at": 499, "alerting.resume_below": 490}
    done = check(capsys, write(tmp_path, {**limits, "permit.status": status, "fee": DELETE}))
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines() == [
        "NO PERMIT NEEDED: the permit expects at most 499 persons at one time; the chapter "
        "regulates assemblies of more than 500 (permit:A), so none of its duties binds this "
        "one, and it covers no assembly over 500"
    ]


def test_check_of_a_revocation_before_the_first_window_is_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    revoked = {"permit.revoked_at": datetime(2027, 7, 1, 12, tzinfo=NY)}
    done = check(capsys, write(tmp_path, {**revoked, "permit.revocation_resolution": "TB-2027-30"}))
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "WARNING permit-not-issued (permit:A): the permit was revoked at "
        "2027-07-01T12:00:00-04:00, before the first permitted window opened, and 4,000 "
        "persons are expected at one time: no issued permit covers an assembly of more than "
        "500; holding one would be permit-required, which only attendance counted live shows"
    ]


def test_a_file_written_before_the_new_fields_loads_with_warnings_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = {
        "applicant.agent": {"name": "J. Doe", "address": "12 Main St, Carmel NY",
                            "county": "Putnam"},
        "application.food_plan": DELETE,
        "facilities.parking_approved": DELETE,
        "facilities.housing_approved": DELETE,
        "facilities.roads_approved": DELETE,
        "facilities.medical_approved": DELETE,
        "permit.dispersal_minutes": DELETE,
    }  # fmt: skip
    done = check(capsys, write(tmp_path, old))
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert len(lines) == 5
    assert all(line.startswith("WARNING not-on-record ") for line in lines)
