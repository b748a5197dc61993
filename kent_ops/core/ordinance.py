"""The Town of Kent "Assemblies, Mass" law (L.L. No. 3-1971) as data.

Every number the law fixes lives here, once, beside the section that fixes it, so a
hearing officer can trace any figure kent-ops prints back to the text of the law.
Citations are written ``permit:A`` … ``permit:G`` (the lettered paragraphs of the
permit section) with items as ``permit:C(9)``, ``fee`` and ``penalties:A`` … ``penalties:C``
(docs/law.md has the key, with the law's words). The live rules that enforce these
numbers are objects in :mod:`kent_ops.core.rules`.
"""

from __future__ import annotations

import math

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
