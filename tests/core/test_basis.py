"""What each stretch of a breach rests on, judged at each moment (docs/law.md, "Each
stretch says what it rests on"): measured, indeterminate, an estimate, the rounding.

Each test drives the engine through one edge and reads the alert's stretches as they are
published, with the bases and the instants they change at.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from core_support import DELETE, QUICK, Driver, local, permit_variant, when

QUICK_WATCHED = {**QUICK, "alerting.stale_after_s": 60}


def stretches(alert: dict[str, Any]) -> list[tuple[str, datetime | None, datetime | None]]:
    return [(x["basis"], when(x["start"]), when(x["end"])) for x in alert["stretches"]]


def test_a_badge_reader_going_offline_mid_breach_makes_that_stretch_indeterminate() -> None:
    """No doctor with 1,000 present: measured; the first-aid reader offline for an hour:
    the roster is not known, so the breach is indeterminate then; back: measured again."""
    d = Driver(permit_variant(QUICK))
    d.staff(local(11), nurses=2, security=20)
    d.present(1_000, local(11))
    d.availability("first-aid", local(12), "offline")
    (alert,) = d.alerts("doctor-on-duty")
    assert alert["uncertain"] is True  # as it stands now, not as it was raised
    assert alert["stretches"][-1]["rests_on"] == ["staff station first-aid offline"]
    assert d.status()["medical"]["uncertain"] is True
    d.availability("first-aid", local(13), "online")
    (alert,) = d.alerts("doctor-on-duty")
    assert alert["uncertain"] is False
    assert stretches(alert) == [
        ("measured", local(11), local(12)),
        ("indeterminate", local(12), local(13)),
        ("measured", local(13), None),
    ]


def test_a_gate_counter_falling_silent_mid_breach_splits_it() -> None:
    """max-at-one-time began with both counters reporting; then south fell silent for 55
    minutes: those minutes are indeterminate, and the alert says so while they last."""
    d = Driver(permit_variant(QUICK_WATCHED))
    d.staff(local(11), doctors=1, nurses=10, security=20)
    d.gate("south", local(12), 100, 0)
    d.present(4_100, local(12))  # north carries the rest: 4,100 > 4,000
    for minute in range(1, 56):  # north keeps reporting, south says nothing
        d.present(4_100 + minute, local(12, minute))
    (alert,) = d.alerts("max-at-one-time")
    assert alert["uncertain"] is True
    assert stretches(alert) == [
        ("measured", local(12), local(12, 1)),  # south's last word at 12:00, silent from 12:01
        ("indeterminate", local(12, 1), None),
    ]
    assert alert["stretches"][-1]["rests_on"] == ["gate south silent"]
    d.gate("south", local(12, 55, 30), 100, 0)  # heard again
    (alert,) = d.alerts("max-at-one-time")
    assert alert["uncertain"] is False
    assert [x[0] for x in stretches(alert)] == ["measured", "indeterminate", "measured"]


def test_a_breach_resting_only_on_an_adjustment_is_an_estimate_naming_it() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(11), doctors=1, nurses=10, security=20)
    d.present(3_900, local(12))
    d.inspector("insp-2", "adjust", local(12, 5), attendance=4_100, reason="sweep count")
    (alert,) = d.alerts("max-at-one-time")
    (x,) = alert["stretches"]
    assert (x["basis"], when(x["start"])) == ("estimate", local(12, 5))
    assert x["rests_on"] == ["the adjustment by insp-2 at 12:05 to 4,100 persons (sweep count)"]
    # The counters alone pass 4,000 (3,901 + the offset of 200 = 4,101): measured from then.
    d.present(4_101 + 100, local(12, 10))
    assert [x[0] for x in stretches(d.alerts("max-at-one-time")[0])] == ["estimate", "measured"]


@pytest.mark.parametrize(("counted", "reads", "clamped"), [(0, 0, True), (150, 100, False)])
def test_an_adjustment_that_would_go_below_zero_reads_0_and_indeterminate(
    counted: int, reads: int, clamped: bool
) -> None:
    """100 counted; a sweep says 50 (offset −50); then the counters fall to 0: the figure
    would be −50. It reads 0, and attendance is indeterminate until the next adjustment.
    Counters rising to 150 instead give 100, known."""
    d = Driver(permit_variant(QUICK))
    d.present(100, local(12))
    d.inspector("insp-1", "adjust", local(12, 1), attendance=50, reason="sweep count")
    d.present(counted, local(12, 2))
    status = d.status()
    assert status["attendance"]["current"] == reads
    assert status["attendance"]["uncertain"] is clamped
    if clamped:
        d.inspector("insp-1", "adjust", local(12, 3), attendance=20, reason="second sweep")
        status = d.status()
        assert (status["attendance"]["current"], status["attendance"]["uncertain"]) == (20, False)
        spans = [(s.figure, s.why, s.start, s.end) for s in d.engine.doubt.spans]
        assert [x[:2] for x in spans] == [("attendance", "attendance clamped at 0")]


@pytest.mark.parametrize(
    ("persons", "basis"),
    [(1_000, None), (1_001, "rounding"), (1_499, "rounding"), (1_500, "measured")],
)
def test_the_rounding_is_exact_at_each_side_of_the_ratio(persons: int, basis: str | None) -> None:
    """2 nurses: 1,000 need 2; 1,001 need 3 only by rounding up (2 × 500 ≥ 1,001 − 499);
    1,500 need 3 by the exact ratio too."""
    d = Driver(permit_variant(QUICK))
    d.staff(local(11), doctors=1, nurses=2, security=20)
    d.present(persons, local(12))
    alerts = d.alerts("nurse-ratio")
    assert [x["basis"] for a in alerts for x in a["stretches"]] == ([basis] if basis else [])


def test_a_doctor_short_of_the_application_is_never_rounding() -> None:
    """1 doctor where the application specified 2, with the nurses within the rounding:
    the doctor's shortfall stays proven (application-staffing is never rounding)."""
    d = Driver(permit_variant({**QUICK, "staffing.doctors_min": 2}))
    d.staff(local(11), doctors=1, nurses=2, security=20)
    d.present(1_001, local(12))
    (app,) = d.alerts("application-staffing")
    assert [x["basis"] for x in app["stretches"]] == ["measured"]
    (nurses,) = d.alerts("nurse-ratio")
    assert [x["basis"] for x in nurses["stretches"]] == ["rounding"]


def test_a_doctor_gone_for_five_seconds_is_a_brief_gap_on_the_record() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.pending_s": 10}))
    d.staff(local(11), doctors=1, nurses=2, security=20)
    d.present(900, local(12))
    d.staff(local(12, 1), doctors=0)
    d.staff(local(12, 1, 5), doctors=1)
    d.tick(local(12, 2))
    assert d.alerts("doctor-on-duty") == []
    (gap,) = d.engine.alert_book.brief_gaps()
    assert (gap.rule, gap.until - gap.since) == ("doctor-on-duty", 5_000_000)
    assert gap.observed == {"doctors_on_duty": 0, "attendance": 900}


def test_an_attendance_finding_gives_each_propertys_persons_at_its_worst() -> None:
    permit = permit_variant(
        {
            **QUICK,
            "property": DELETE,
            "properties": [
                {"id": "main-field", "owner": "R. Smith", "address": "400 Route 52"},
                {"id": "overflow", "owner": "J. Lee", "address": "410 Route 52"},
            ],
            "gates": [
                {"id": "north", "property": "main-field"},
                {"id": "south", "property": "overflow"},
            ],
            "lots": [{"id": "lot-a", "capacity": 1100, "property": "main-field"}],
            "staff_stations": [{"id": "first-aid", "property": "main-field"}],
        }
    )
    d = Driver(permit)
    d.staff(local(11), doctors=1, nurses=10, security=20)
    d.gate("south", local(12), 300, 0)
    d.present(4_200, local(12))
    d.present(4_100, local(12, 1))
    (alert,) = d.alerts("max-at-one-time")
    assert alert["worst"]["observed"] == {
        "attendance": 4_200,
        "properties": {"main-field": 3_900, "overflow": 300},
    }


def test_a_basis_that_held_for_no_time_leaves_no_stretch() -> None:
    """Three nurses badge on at one instant: after the second the breach would hold only by
    the rounding, after the third not at all. No stretch of no time is kept."""
    d = Driver(permit_variant(QUICK))
    d.staff(local(11), doctors=1, nurses=5, security=20)
    d.present(3_900, local(12))  # 5 nurses for 3,900: 8 needed, beyond the rounding
    d.staff(local(12, 10), nurses=8)  # 6, 7 (within the rounding), then 8, at one instant
    (alert,) = d.alerts("nurse-ratio")
    assert stretches(alert) == [("measured", local(12), local(12, 10))]
