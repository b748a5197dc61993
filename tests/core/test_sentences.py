"""The one sentence an inspector reads for each rule, word for word.

The sentence is what the dashboard shows and what the report quotes at a hearing, so
each figure in it must be the one observed or required, in its place, with the rule's
citation. Every field below has its own figure, so a sentence that printed the wrong
one would read differently.
"""

from __future__ import annotations

from typing import Any

import pytest

from kent_ops.core.rules import RULES, message_for
from kent_ops.core.rules.base import figure

CASES: list[tuple[str, str | None, dict[str, Any], dict[str, Any], str]] = [
    (
        "permit-required",
        None,
        {"attendance": 1234, "permit_issued": True},
        {},
        "1,234 persons present and outside the permitted hours (permit:A, penalties:A)",
    ),
    (
        "permit-required",
        None,
        {"attendance": 2345, "permit_issued": False},
        {},
        "2,345 persons present and the permit is not issued (permit:A, penalties:A)",
    ),
    (
        "max-at-one-time",
        None,
        {"attendance": 4321},
        {"attendance_at_most": 4000},
        "4,321 persons present; the permit allows 4,000 at one time (permit:A, permit:B(2))",
    ),
    (
        "permit-required",
        None,
        {
            "attendance": 3000,
            "permit_issued": True,
            "inside_window": False,
            "ended_at": "2027-07-04T23:30:00-04:00",
            "ended_by": "window",
            "dispersal": "allowance over",
            "allowance_until": "2027-07-05T00:30:00-04:00",
        },
        {"attendance_at_most": 500},
        "3,000 persons present after the permitted hours ended at 23:30, and the time "
        "allowed to disperse ended at 00:30 (permit:A, penalties:A)",
    ),
    (
        "permit-required",
        None,
        {
            "attendance": 2990,
            "permit_issued": False,
            "inside_window": True,
            "ended_at": "2027-07-04T14:10:00-04:00",
            "ended_by": "revocation",
            "dispersal": "admitted",
            "admitted_at": "2027-07-04T14:12:05-04:00",
        },
        {"attendance_at_most": 500},
        "2,990 persons present and someone was admitted at 14:12:05, after the permit was "
        "revoked at 14:10 (permit:A, penalties:A)",
    ),
    (
        "permit-required",
        None,
        {
            "attendance": 501,
            "permit_issued": True,
            "inside_window": True,
            "permit_max_at_one_time": 400,
        },
        {"attendance_at_most": 500},
        "501 persons present; a permit for at most 400 covers no assembly of more than 500 "
        "(permit:A, penalties:A)",
    ),
    (
        "dispersing",
        None,
        {
            "attendance": 2900,
            "ended_at": "2027-07-04T23:30:00-04:00",
            "ended_by": "window",
            "allowance_until": "2027-07-05T00:30:00-04:00",
        },
        {"attendance_at_most": 500, "dispersed_by": "2027-07-05T00:30:00-04:00"},
        "2,900 persons leaving after the permitted hours ended at 23:30; more than 500 may "
        "remain until 00:30, and no one may be admitted (permit:A)",
    ),
    (
        "max-collective",
        None,
        {"entries": 9876},
        {"entries_at_most": 9000},
        "9,876 entries through the gates; the application expects 9,000 persons "
        "collectively (entries are not persons: one who leaves and comes back enters "
        "twice) (permit:B(2))",
    ),
    (
        "application-staffing",
        None,
        {"doctors_on_duty": 1, "nurses_on_duty": 2, "attendance": 1000},
        {"doctors": 2, "nurses": 3, "law_doctors": 1, "law_nurses": 2, "persons_per_nurse": 400},
        "1 doctor on duty; the application specified 2 (the law requires 1); 2 nurses on "
        "duty for 1,000 persons; the application specified 3 (the law requires 2) (permit:G)",
    ),
    (
        "application-staffing",
        None,
        {"doctors_on_duty": 2, "nurses_on_duty": 2, "attendance": 801, "within_rounding": True},
        {"doctors": 2, "nurses": 3, "law_doctors": 1, "law_nurses": 2, "persons_per_nurse": 400},
        # An older log's flag: a figure short of the application is never "rounding".
        "2 nurses on duty for 801 persons; the application specified 3 (the law requires 2) "
        "(permit:G)",
    ),
    (
        "nurse-ratio",
        None,
        {"nurses_on_duty": 2, "attendance": 1001, "within_rounding": True},
        {"nurses": 3},
        "2 nurses on duty; 1,001 persons need 3; this holds only by rounding up (kent-ops' "
        "reading): 2 nurses meet one for each whole 500 persons (permit:C(9))",
    ),
    (
        "parking-ratio",
        None,
        {"spaces_provided": 250, "attendance": 1001, "within_rounding": True},
        {"spaces": 251},
        "250 car spaces provided; 1,001 persons need 251; this holds only by rounding up "
        "(kent-ops' reading): 250 car spaces meet one for each whole 4 persons (permit:C(6))",
    ),
    (
        "doctor-on-duty",
        None,
        {"doctors_on_duty": 0, "attendance": 1501},
        {"doctors": 1},
        "0 doctors on duty with 1,501 persons present; at least 1 required at all times"
        " (permit:C(9))",
    ),
    (
        "nurse-ratio",
        None,
        {"nurses_on_duty": 2, "attendance": 1450},
        {"nurses": 3},
        "2 nurses on duty; 1,450 persons need 3 (permit:C(9))",
    ),
    (
        "parking-ratio",
        None,
        {"spaces_provided": 1050, "attendance": 4300},
        {"spaces": 1075},
        "1,050 car spaces provided; 4,300 persons need 1,075 (permit:C(6))",
    ),
    (
        "overnight-housing",
        None,
        {"attendance": 2750},
        {},
        "2,750 persons present past midnight and no housing declared (permit:B(14), permit:C(7))",
    ),
    (
        "facility-deficient",
        "C(2)(a)",
        {"note": "toilets overflowing"},
        {},
        "checklist item C(2)(a) marked deficient: toilets overflowing (permit:C(2)(a), permit:G)",
    ),
    (
        "facility-deficient",
        "C(2)(a)",
        {},
        {},
        "checklist item C(2)(a) marked deficient (permit:C(2)(a), permit:G)",
    ),
    (
        "vehicles-at-one-time",
        None,
        {"vehicles": 1234},
        {"vehicles_at_most": 1100},
        "1,234 cars in the lots; the permit expects at most 1,100 at one time (permit:B(2))",
    ),
    (
        "lot-full",
        "lot-a",
        {"share": 0.96, "occupied": 576, "capacity": 600},
        {},
        "lot lot-a is 96% full (576 of 600) (permit:C(6))",
    ),
    (
        "security-staffing",
        None,
        {"security_on_duty": 17},
        {"security": 20},
        "17 security guards on duty; 20 declared (permit:B(8))",
    ),
    (
        "sensor-offline",
        "north",
        {"kind": "gate", "available": False},
        {},
        "gate sensor north is offline (its availability says so); its figures may be behind",
    ),
    (
        "sensor-offline",
        "lot-b",
        {"kind": "lot", "available": None},
        {},
        "lot sensor lot-b is silent; its figures may be behind",
    ),
    (
        "counter-reset",
        "south",
        {"seq": 0, "restarts": 1},
        {},
        "gate counter south restarted at seq 0; its earlier totals were kept",
    ),
    (
        "cars-exceed-persons",
        None,
        {"vehicles": 312, "attendance": 250, "staff_on_duty": 12},
        {"vehicles_at_most": 262},
        "312 cars are parked but the gates count 250 persons and 12 staff: a gate counter "
        "may be missing entries",
    ),
    (
        "cars-exceed-persons",
        None,
        {"vehicles": 1, "attendance": 0, "staff_on_duty": 0},
        {"vehicles_at_most": 0},
        "1 car is parked but the gates count 0 persons and 0 staff: a gate counter may be "
        "missing entries",
    ),
    (
        "cars-exceed-persons",
        None,
        {"vehicles": 1_204, "attendance": 1, "staff_on_duty": 3},
        {"vehicles_at_most": 4},
        "1,204 cars are parked but the gates count 1 person and 3 staff: a gate counter may "
        "be missing entries",
    ),
    (
        "sensor-gap",
        "first-aid",
        {"device": "badge reader", "first": 7, "last": 40, "missing": 34, "roster": False},
        {},
        "badge reader first-aid: seq 7–40 never received",
    ),
    (
        "sensor-gap",
        "first-aid",
        {"device": "badge reader", "first": 7, "last": 40, "missing": 34, "roster": True},
        {},
        "badge reader first-aid: seq 7–40 never received; its roster is unknown until it is "
        "re-stated",
    ),
    (
        "sensor-gap",
        "north",
        {"device": "gate counter", "first": 2_147_483_600, "last": 2_147_483_600, "missing": 1},
        {},
        "gate counter north: seq 2,147,483,600 never received",
    ),
    (
        "sensor-stuck",
        "north",
        {"kind": "gate"},
        {"counting": True},
        "gate sensor north's messages arrive but none has been counted (each refused, or "
        "taken for an old seq); its figures may be behind",
    ),
    (
        "sensor-stuck",
        "north",
        {"kind": "gate", "counting": True},
        {"counting": True},
        "gate sensor north is counting again",
    ),
    (
        "broker-restarted",
        None,
        {"how": "its uptime fell from 3,600 s to 4 s"},
        {"heard": True},
        "the event's broker restarted (its uptime fell from 3,600 s to 4 s): messages it "
        "acknowledged since its last save may be lost; each sensor's figures are "
        "indeterminate until it is heard again",
    ),
    (
        "broker-restarted",
        None,
        {"how": "its uptime fell from 3,600 s to 4 s", "heard": True},
        {"heard": True},
        "every sensor has been heard again since the broker restarted",
    ),
    (
        "clock-skew",
        "north",
        {"skew_s": 95.123},
        {"skew_s_at_most": 30},
        "sensor north's clock is off by +95 s; its messages are timed on receipt",
    ),
    (
        "clock-skew",
        "north",
        {"skew_s": -1234.5},
        {"skew_s_at_most": 30},
        "sensor north's clock is off by -1,234 s; its messages are timed on receipt",
    ),
    (
        "evidence-storage",
        None,
        {"error": "disk full"},
        {},
        "the evidence log cannot be written (disk full); messages are held "
        "unacknowledged until it can",
    ),
    (
        "evidence-storage",
        None,
        {},
        {},
        "the evidence log cannot be written (error); messages are held unacknowledged until it can",
    ),
    (
        "broker-session",
        None,
        {},
        {},
        "the broker had no session for the aggregator although it had one before: readings "
        "the broker acknowledged while the aggregator was away may be missing (the session "
        "was wiped or taken, or the broker lost its data)",
    ),
    (
        "broker-session",
        None,
        {"cause": "disconnects", "count": 3, "within_s": 60},
        {},
        "the broker closed the aggregator's connection 3 times within 60 s: another client "
        "may be using its session (a second kent-ops run, or a leaked session id); readings "
        "may be missing",
    ),
    (
        "evidence-rollback",
        None,
        {"source": "the broker's checkpoint", "records": 5000, "accepted": True},
        {"record": 10000},
        "the evidence log holds 5,000 records but the broker's checkpoint named record "
        "10,000: committed records are missing; the operator went on with it "
        "(--accept-rollback)",
    ),
    (
        "clock-jump",
        None,
        {"jump_s": -600},
        {},
        "the host clock jumped -600 s against the service's steady clock; receive times keep "
        "the steady clock so every rule keeps time; set the host clock right (NTP)",
    ),
    (
        "evidence-flood",
        "sensor-north",
        {"rejected_bytes": 70_000},
        {"rejected_bytes_at_most": 65_536, "per_s": 60.0},
        "sensor-north sends more rejected messages than the evidence log keeps whole "
        "(65,536 bytes every 60 s); the log keeps the rest as a count and their hashes",
    ),
    (
        "broker-session",
        None,
        {"changed_id": True},
        {},
        "the aggregator's broker session is new because its session id changed (a new "
        "broker password or session key, or an upgrade of kent-ops): readings queued for "
        "the old session while it was away are not in the evidence log",
    ),
    (
        "sensor-offline",
        "north",
        {"kind": "gate", "available": True, "stale": False, "online": True},
        {"online": True},
        "gate sensor north is reporting again",
    ),
    (
        "evidence-storage",
        None,
        {"record": 1234, "error": "its hash does not match"},
        {},
        "the evidence log does not verify at record 1234 (its hash does not match); the "
        "service stopped rather than go on over a broken log",
    ),
    (
        "evidence-storage",
        None,
        {"record": None, "error": "no meta table"},
        {},
        "the evidence log does not verify (no meta table); the service stopped rather than "
        "go on over a broken log",
    ),
    (
        "evidence-flood",
        "sensor-south",
        {"rejected_bytes": 9_000},
        {"rejected_bytes_at_most": 8_192, "per_s": 30.0},
        "sensor-south sends more rejected messages than the evidence log keeps whole "
        "(8,192 bytes every 30 s); the log keeps the rest as a count and their hashes",
    ),
    (
        "dispersing",
        None,
        {
            "attendance": 500,
            "ended_at": "2027-07-04T23:30:00-04:00",
            "ended_by": "window",
            "allowance_until": "2027-07-05T00:30:00-04:00",
        },
        {"attendance_at_most": 500, "dispersed_by": "2027-07-05T00:30:00-04:00"},
        "500 persons present: not more than 500 (permit:A)",
    ),
    (
        "nurse-ratio",
        None,
        {"nurses_on_duty": 4, "attendance": 2600, "assembly_on": False},
        {"nurses": 6},
        "4 nurses on duty; 2,600 persons need 6; the assembly is over (permit:C(9))",
    ),
    (
        "application-staffing",
        None,
        {"doctors_on_duty": 3, "nurses_on_duty": 9, "attendance": 3000},
        {"doctors": 4, "nurses": 8, "law_doctors": 1, "law_nurses": 6, "persons_per_nurse": 400},
        "3 doctors on duty; the application specified 4 (the law requires 1) (permit:G)",
    ),
    (
        "application-staffing",
        None,
        {"doctors_on_duty": 1, "nurses_on_duty": 1, "attendance": 300},
        {"doctors": 1, "nurses": 1, "law_doctors": 1, "law_nurses": 1, "persons_per_nurse": 400},
        "1 doctor and 1 nurse on duty, as the application specified (permit:G)",
    ),
    (
        "application-staffing",
        None,
        {"doctors_on_duty": 2, "nurses_on_duty": 3, "attendance": 1200},
        {"doctors": 2, "nurses": 3, "law_doctors": 1, "law_nurses": 3, "persons_per_nurse": 400},
        "2 doctors and 3 nurses on duty, as the application specified (permit:G)",
    ),
]


@pytest.mark.parametrize(
    ("rule", "subject", "observed", "required", "sentence"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_each_rule_says_its_figures_in_one_sentence(
    rule: str, subject: str | None, observed: dict[str, Any], required: dict[str, Any],
    sentence: str,
) -> None:  # fmt: skip
    assert RULES[rule].sentence(subject, observed, required) == sentence
    assert message_for(rule, subject, observed, required) == sentence


def test_every_rule_has_a_sentence_here() -> None:
    assert {c[0] for c in CASES} == set(RULES)


def test_a_message_for_figures_that_do_not_fit_is_the_rule_and_subject() -> None:
    """A record from another version may lack a field: the message degrades, never raises."""
    assert message_for("nurse-ratio", None, {}, {}) == "nurse-ratio"
    assert message_for("lot-full", "lot-a", {"occupied": 3}, {}) == "lot-full lot-a"
    assert message_for("no-such-rule", "x", {}, {}) == "no-such-rule x"
    assert message_for("no-such-rule", None, {}, {}) == "no-such-rule"


def test_figures_are_grouped_by_thousands_and_anything_else_is_shown_as_it_is() -> None:
    assert [figure(v) for v in (1234567, 0, -4500, True, 2.5, "n/a", None)] == [
        "1,234,567", "0", "-4,500", "True", "2.5", "n/a", "None",
    ]  # fmt: skip
