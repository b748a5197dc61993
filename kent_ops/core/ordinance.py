"""The Town of Kent "Assemblies, Mass" law (L.L. No. 3-1971) as data.

Every number the law fixes lives here, once, beside the section that fixes it, so a
hearing officer can trace any figure kent-ops prints back to the text of the law.
Citations follow SPEC.md: ``permit:A`` … ``permit:G`` with items as ``permit:C(9)``,
``fee`` and ``penalties:A`` … ``penalties:C``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "APPLICATION_LEAD_DAYS",
    "BOARD_DECISION_DAYS",
    "CLEAN_UP_DAYS",
    "DOCTORS_MIN",
    "FINE_MAX_USD",
    "FINE_MIN_USD",
    "HEARING_NOTICE_DAYS",
    "INSURANCE_BODILY_INJURY_PER_OCCURRENCE",
    "INSURANCE_BODILY_INJURY_PER_PERSON",
    "INSURANCE_CANCELLATION_NOTICE_DAYS",
    "INSURANCE_PROPERTY_DAMAGE",
    "PERMIT_THRESHOLD",
    "PERSONS_PER_CAR_SPACE",
    "PERSONS_PER_NURSE",
    "RULES",
    "Rule",
    "car_spaces_required",
    "nurses_required",
]

PERMIT_THRESHOLD = 500
"""An assembly of *more than* this many persons needs a permit (permit:A)."""
CITE_THRESHOLD = "permit:A"

APPLICATION_LEAD_DAYS = 60
"""The petition is filed at least this many days before the assembly (permit:B)."""
BOARD_DECISION_DAYS = 30
"""The Town Board acts within this many days of submission (permit:B)."""
HEARING_NOTICE_DAYS = 10
"""Notice of the public hearing is published at least this many days before it (permit:B)."""
CITE_APPLICATION = "permit:B"

PERSONS_PER_CAR_SPACE = 4
"""At least one car space for every four persons in attendance (permit:C(6))."""
CITE_PARKING = "permit:C(6)"

DOCTORS_MIN = 1
"""At least one doctor in attendance at all times (permit:C(9))."""
PERSONS_PER_NURSE = 500
"""At least one registered nurse per 500 persons, on duty at all times (permit:C(9))."""
CITE_MEDICAL = "permit:C(9)"

INSURANCE_BODILY_INJURY_PER_PERSON = 250_000
INSURANCE_BODILY_INJURY_PER_OCCURRENCE = 500_000
INSURANCE_PROPERTY_DAMAGE = 250_000
INSURANCE_CANCELLATION_NOTICE_DAYS = 10
CITE_INSURANCE = "permit:E"

CLEAN_UP_DAYS = 5
"""Waste removed within five days of the assembly's end; a bond secures it (permit:F)."""
CITE_CLEAN_UP = "permit:F"

FINE_MIN_USD = 100
FINE_MAX_USD = 500
"""Each violation: a fine of $100 to $500, or up to one year, or both (penalties:B)."""
CITE_FINE = "penalties:B"
CITE_REVOCATION = "permit:G"


def nurses_required(attendance: int, persons_per_nurse: int = PERSONS_PER_NURSE) -> int:
    """Registered nurses needed for ``attendance`` persons; counts round up (permit:C(9))."""
    if attendance <= 0:
        return 0
    return math.ceil(attendance / persons_per_nurse)


def car_spaces_required(attendance: int) -> int:
    """Car spaces needed for ``attendance`` persons; counts round up (permit:C(6))."""
    if attendance <= 0:
        return 0
    return math.ceil(attendance / PERSONS_PER_CAR_SPACE)


@dataclass(frozen=True, slots=True)
class Rule:
    """One live rule of SPEC 4: what it is called, how grave, what law it enforces."""

    name: str
    severity: str  # breach | warning | data
    cite: str
    summary: str
    per_subject: bool = False
    counts_attendance: bool = False
    """Its figures come from the gate counts: uncertain while a gate counter is down."""


RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        Rule(
            "permit-required",
            "breach",
            "permit:A, penalties:A",
            "More than 500 persons without an issued permit, or outside the permitted hours.",
            counts_attendance=True,
        ),
        Rule(
            "max-at-one-time",
            "breach",
            "permit:B(2), permit:G",
            "Attendance above the permitted maximum at one time.",
            counts_attendance=True,
        ),
        Rule(
            "max-collective",
            "breach",
            "permit:B(2), permit:G",
            "Entries above the permitted maximum collectively.",
            counts_attendance=True,
        ),
        Rule(
            "doctor-on-duty",
            "breach",
            "permit:C(9)",
            "Persons present and fewer doctors on duty than the permit requires (at least 1).",
            counts_attendance=True,
        ),
        Rule(
            "nurse-ratio",
            "breach",
            "permit:C(9)",
            "Fewer registered nurses on duty than one per 500 persons (or the permit's ratio).",
            counts_attendance=True,
        ),
        Rule(
            "parking-ratio",
            "breach",
            "permit:C(6)",
            "Fewer car spaces provided than one per four persons in attendance.",
            counts_attendance=True,
        ),
        Rule(
            "overnight-housing",
            "breach",
            "permit:B(14), permit:C(7)",
            "Persons present past midnight and no housing declared.",
            counts_attendance=True,
        ),
        Rule(
            "facility-deficient",
            "breach",
            "permit:G",
            "An inspector found a required facility deficient.",
            per_subject=True,
        ),
        Rule(
            "vehicles-at-one-time",
            "warning",
            "permit:B(2)",
            "More cars in the lots than the permit expects at one time.",
        ),
        Rule(
            "lot-full",
            "warning",
            "permit:C(6)",
            "A parking lot at 95% of its capacity or more.",
            per_subject=True,
        ),
        Rule(
            "security-staffing",
            "warning",
            "permit:B(8)",
            "Fewer security guards on duty than declared, inside the permitted hours.",
        ),
        Rule(
            "sensor-offline",
            "data",
            "—",
            "A listed sensor is offline or has been silent too long.",
            per_subject=True,
        ),
        Rule(
            "counter-reset",
            "data",
            "—",
            "A gate counter restarted; its totals were stitched.",
            per_subject=True,
        ),
        Rule(
            "clock-skew",
            "data",
            "—",
            "A sensor's clock is off by more than 30 s; its messages are timed on receipt.",
            per_subject=True,
        ),
        Rule(
            "evidence-storage",
            "data",
            "—",
            "The evidence log cannot be written; messages are not acknowledged until it can.",
        ),
    )
}
"""The live rules of SPEC 4 (and 4a), keyed by name."""
