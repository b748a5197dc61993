"""The ordinance as data: its numbers, their rounding, and the rule table."""

from __future__ import annotations

import pytest

from kent_ops.core import ordinance as law
from kent_ops.core.rules import RULES


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PERMIT_THRESHOLD", 500),
        ("APPLICATION_LEAD_DAYS", 60),
        ("BOARD_DECISION_DAYS", 30),
        ("HEARING_NOTICE_DAYS", 10),
        ("PERSONS_PER_CAR_SPACE", 4),
        ("DOCTORS_MIN", 1),
        ("PERSONS_PER_NURSE", 500),
        ("INSURANCE_BODILY_INJURY_PER_PERSON", 250_000),
        ("INSURANCE_BODILY_INJURY_PER_OCCURRENCE", 500_000),
        ("INSURANCE_PROPERTY_DAMAGE", 250_000),
        ("INSURANCE_CANCELLATION_NOTICE_DAYS", 10),
        ("CLEAN_UP_DAYS", 5),
        ("FINE_MIN_USD", 100),
        ("FINE_MAX_USD", 500),
    ],
)
def test_the_numbers_the_law_fixes(name: str, value: int) -> None:
    assert getattr(law, name) == value


@pytest.mark.parametrize(
    ("cite_name", "cite"),
    [
        ("CITE_THRESHOLD", "permit:A"),
        ("CITE_APPLICATION", "permit:B"),
        ("CITE_PARKING", "permit:C(6)"),
        ("CITE_MEDICAL", "permit:C(9)"),
        ("CITE_INSURANCE", "permit:E"),
        ("CITE_CLEAN_UP", "permit:F"),
        ("CITE_FINE", "penalties:B"),
    ],
)
def test_each_number_carries_its_citation(cite_name: str, cite: str) -> None:
    assert getattr(law, cite_name) == cite


@pytest.mark.parametrize(
    ("attendance", "nurses"),
    [(-5, 0), (0, 0), (1, 1), (500, 1), (501, 2), (1000, 2), (1001, 3), (1500, 3), (1501, 4)],
)
def test_nurses_round_up_per_500(attendance: int, nurses: int) -> None:
    assert law.nurses_required(attendance) == nurses


def test_a_stricter_permit_ratio_needs_more_nurses() -> None:
    assert law.nurses_required(1001, 250) == 5
    assert law.nurses_required(1000, 250) == 4


@pytest.mark.parametrize(
    ("attendance", "spaces"),
    [(-1, 0), (0, 0), (1, 1), (4, 1), (5, 2), (400, 100), (401, 101), (1000, 250), (1001, 251)],
)
def test_car_spaces_round_up_per_four(attendance: int, spaces: int) -> None:
    assert law.car_spaces_required(attendance) == spaces


SPEC_RULES = {
    "permit-required": ("breach", "permit:A, penalties:A"),
    "max-at-one-time": ("breach", "permit:A, permit:B(2)"),
    "dispersing": ("warning", "permit:A"),
    "max-collective": ("warning", "permit:B(2)"),
    "doctor-on-duty": ("breach", "permit:C(9)"),
    "nurse-ratio": ("breach", "permit:C(9)"),
    "application-staffing": ("breach", "permit:G"),
    "parking-ratio": ("breach", "permit:C(6)"),
    "overnight-housing": ("breach", "permit:B(14), permit:C(7)"),
    "vehicles-at-one-time": ("warning", "permit:B(2)"),
    "lot-full": ("warning", "permit:C(6)"),
    "security-staffing": ("warning", "permit:B(8)"),
    "sensor-offline": ("data", "—"),
    "counter-reset": ("data", "—"),
}


@pytest.mark.parametrize(("rule", "expected"), sorted(SPEC_RULES.items()))
def test_every_spec_rule_has_its_severity_and_cite(rule: str, expected: tuple[str, str]) -> None:
    entry = RULES[rule]
    assert (entry.severity, entry.cite) == expected
    assert entry.name == rule
    assert entry.summary


def test_per_subject_rules_are_the_per_lot_and_per_sensor_ones() -> None:
    per_subject = {name for name, rule in RULES.items() if rule.per_subject}
    assert {"lot-full", "sensor-offline", "counter-reset", "facility-deficient"} <= per_subject
    assert not per_subject & {"permit-required", "nurse-ratio", "parking-ratio"}


def test_facility_deficient_is_a_breach() -> None:
    assert RULES["facility-deficient"].severity == "breach"
