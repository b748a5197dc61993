"""Every live rule (docs/law.md) at its boundary, through the engine.

The permits here raise and clear alerts at once (pending_s = clear_s = 0) and never let a
sensor go stale, unless a test is about exactly that, so each assertion is about one
rule crossing one figure at one instant.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from core_support import (
    NY,
    QUICK,
    TOPICS,
    US,
    WINDOW_END,
    WINDOW_START,
    Driver,
    local,
    permit_variant,
    utc,
    when,
)
from wire_support import lot_occupancy

from kent_ops.core.rules import message_for


def festival(changes: dict[str, Any] | None = None, *, at: datetime | None = None) -> Driver:
    """An engine on a quick permit with the medical and security staff fully on duty."""
    d = Driver(permit_variant({**QUICK, **(changes or {})}))
    d.staff(at or local(12), doctors=1, nurses=10, security=20)
    return d


def only_alert(d: Driver, rule: str, subject: Any = ...) -> dict[str, Any]:
    alerts = d.alerts(rule, subject)
    assert len(alerts) == 1, alerts
    return alerts[0]


# -- permit-required -----------------------------------------------------------------------


@pytest.mark.parametrize("status", ["pending", "none", "denied", "revoked"])
def test_permit_required_above_500_without_an_issued_permit(status: str) -> None:
    d = festival({"permit.status": status})
    d.present(500, local(12))
    assert not d.holds("permit-required")
    d.present(501, local(12, 1))
    assert d.holds("permit-required")
    alert = only_alert(d, "permit-required")
    assert alert["severity"] == "breach"
    assert alert["cite"] == "permit:A, penalties:A"
    assert alert["subject"] is None
    assert alert["observed"]["attendance"] == 501
    assert alert["observed"]["permit_issued"] is False
    assert alert["required"] == {"attendance_at_most": 500}
    assert (
        alert["message"]
        == "501 persons present and the permit is not issued (permit:A, penalties:A)"
    )
    assert when(alert["since"]) == local(12, 1)
    d.present(500, local(12, 2))
    assert not d.holds("permit-required")
    assert when(only_alert(d, "permit-required")["ended_at"]) == local(12, 2)


def test_an_issued_permit_inside_its_window_allows_more_than_500() -> None:
    d = festival()
    d.present(3000, local(12))
    assert not d.holds("permit-required")


def test_permit_required_outside_the_window_ends_at_its_first_instant() -> None:
    before = WINDOW_START - timedelta(seconds=1)
    d = festival(at=before)
    d.present(501, before)
    assert d.holds("permit-required")
    d.tick(WINDOW_START - US)
    assert d.holds("permit-required")
    d.tick(WINDOW_START)
    assert not d.holds("permit-required")
    alert = only_alert(d, "permit-required")
    assert when(alert["since"]) == before
    assert when(alert["ended_at"]) == WINDOW_START
    assert alert["worst"]["observed"]["inside_window"] is False  # what the breach was
    assert alert["observed"]["inside_window"] is True  # what ended it
    assert "inside the permitted hours" in alert["message"]  # the figures that ended it


def test_a_crowd_past_the_window_end_disperses_for_an_hour_then_needs_a_permit() -> None:
    d = festival(at=local(23))
    d.present(501, local(23))
    d.tick(WINDOW_END - US)
    assert not d.holds("permit-required")
    assert not d.holds("dispersing")
    assert d.status()["window"]["inside"] is True
    d.tick(WINDOW_END)
    assert d.holds("dispersing")
    assert not d.holds("permit-required")
    assert when(only_alert(d, "dispersing")["since"]) == WINDOW_END
    assert d.status()["window"]["inside"] is False
    d.tick(WINDOW_END + timedelta(minutes=60) - US)
    assert not d.holds("permit-required")
    d.tick(WINDOW_END + timedelta(minutes=60))
    assert d.holds("permit-required")
    assert not d.holds("dispersing")
    assert when(only_alert(d, "permit-required")["since"]) == WINDOW_END + timedelta(minutes=60)


def test_500_outside_the_window_is_not_a_breach() -> None:
    d = festival(at=local(9))
    d.present(500, local(9))
    assert not d.holds("permit-required")


def test_a_window_boundary_is_found_between_messages_without_ticks() -> None:
    """Feeding after the boundary still dates the end of the breach at the boundary."""
    d = festival(at=local(9, 30))
    d.present(600, local(9, 30))
    d.present(601, local(10, 30))  # the next message comes well inside the window
    alert = only_alert(d, "permit-required")
    assert when(alert["ended_at"]) == WINDOW_START


# -- limits ---------------------------------------------------------------------------------


def test_max_at_one_time_at_max_and_max_plus_one() -> None:
    d = festival()
    d.present(4000, local(12))
    assert not d.holds("max-at-one-time")
    d.present(4001, local(12, 1))
    alert = only_alert(d, "max-at-one-time")
    assert alert["ended_at"] is None
    assert (alert["severity"], alert["cite"]) == ("breach", "permit:A, permit:B(2)")
    assert alert["observed"] == {"attendance": 4001}
    assert alert["required"] == {"attendance_at_most": 4000}
    assert alert["message"] == (
        "4,001 persons present; the permit allows 4,000 at one time (permit:A, permit:B(2))"
    )


def test_max_collective_counts_entries_not_attendance() -> None:
    d = festival()
    d.gate("north", local(12), 9000, 8900)
    assert not d.holds("max-collective")
    assert d.attendance == 100
    d.gate("north", local(12, 1), 9001, 8901)
    alert = only_alert(d, "max-collective")
    assert alert["observed"] == {"entries": 9001}
    assert alert["required"] == {"entries_at_most": 9000}
    assert not d.holds("max-at-one-time")


def test_entries_from_several_gates_add_up_for_max_collective() -> None:
    d = festival()
    d.gate("north", local(12), 4500, 4400)
    d.gate("south", local(12), 4500, 4400)
    assert not d.holds("max-collective")
    d.gate("north-manual", local(12, 1), 1, 1)
    assert d.holds("max-collective")


# -- medical ---------------------------------------------------------------------------------


def test_doctor_on_duty_holds_once_more_than_500_are_present() -> None:
    """The chapter regulates an assembly that exceeds 500 persons: 500 with no doctor is
    no breach (docs/law.md, "Duties bind above 500"); 501 is."""
    d = Driver(permit_variant(QUICK))
    d.staff(local(12), nurses=2, security=20)
    d.gate("north", local(12), 0, 0)
    assert not d.holds("doctor-on-duty")
    d.present(500, local(12, 0, 30))
    assert not d.holds("doctor-on-duty")
    d.present(501, local(12, 1))
    alert = only_alert(d, "doctor-on-duty")
    assert alert["observed"] == {"doctors_on_duty": 0, "attendance": 501}
    assert alert["required"] == {"doctors": 1}
    assert alert["cite"] == "permit:C(9)"
    d.staff(local(12, 2), doctors=1)
    assert not d.holds("doctor-on-duty")
    assert when(only_alert(d, "doctor-on-duty")["ended_at"]) == local(12, 2)
    d.staff(local(12, 3), doctors=0)
    assert d.holds("doctor-on-duty")


def test_a_stricter_permit_needs_its_own_doctor_count() -> None:
    d = Driver(permit_variant({**QUICK, "staffing.doctors_min": 2}))
    d.staff(local(12), doctors=1, nurses=10, security=20)
    d.present(501, local(12))
    # One doctor meets the law (permit:C(9)); the application's second is a ground under G.
    assert not d.holds("doctor-on-duty")
    alert = only_alert(d, "application-staffing")
    assert alert["cite"] == "permit:G"
    assert alert["message"] == (
        "1 doctor on duty; the application specified 2 (the law requires 1) (permit:G)"
    )
    d.staff(local(12, 1), doctors=2)
    assert not d.holds("application-staffing")
    d.staff(local(12, 2), doctors=0)
    assert d.holds("doctor-on-duty")
    assert not d.holds("application-staffing")


def test_nurses_1000_persons_need_2_and_1001_need_3_by_rounding_up() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(12), doctors=1, nurses=2, security=20)
    d.present(1000, local(12))
    assert not d.holds("nurse-ratio")
    assert d.status()["medical"]["nurses_required"] == 2
    d.present(1001, local(12, 1))
    assert d.status()["medical"]["nurses_required"] == 3
    alert = only_alert(d, "nurse-ratio")
    assert alert["observed"] == {"nurses_on_duty": 2, "attendance": 1001, "within_rounding": True}
    assert alert["required"] == {"nurses": 3}
    assert alert["message"] == (
        "2 nurses on duty; 1,001 persons need 3; this holds only by rounding up (kent-ops' "
        "reading): 2 nurses meet one for each whole 500 persons (permit:C(9))"
    )
    d.staff(local(12, 2), nurses=3)
    assert not d.holds("nurse-ratio")


def test_a_shortfall_beyond_the_rounding_says_nothing_of_it() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(12), doctors=1, nurses=1, security=20)
    d.present(1000, local(12))
    alert = only_alert(d, "nurse-ratio")
    assert alert["observed"] == {"nurses_on_duty": 1, "attendance": 1000}
    assert alert["message"] == "1 nurse on duty; 1,000 persons need 2 (permit:C(9))"


def test_a_stricter_nurse_ratio_is_the_applications_not_the_laws() -> None:
    d = Driver(permit_variant({**QUICK, "staffing.persons_per_nurse": 400}))
    d.staff(local(12), doctors=1, nurses=4, security=20)
    d.present(1600, local(12))
    assert not d.holds("nurse-ratio")
    assert not d.holds("application-staffing")
    d.present(1601, local(12, 1))  # 5 by the application
    alert = only_alert(d, "application-staffing")
    # A figure short of the application is never "within the rounding" (docs/law.md).
    assert "within_rounding" not in alert["observed"]
    assert [x["basis"] for x in alert["stretches"]] == ["measured"]
    d.present(2000, local(12, 2))
    assert not d.holds("nurse-ratio")  # 4 nurses meet the law's 4 for 2,000
    worst = only_alert(d, "application-staffing")["worst"]
    assert worst["required"]["nurses"] == 5
    assert worst["required"]["law_nurses"] == 4
    assert "within_rounding" not in worst["observed"]
    assert message_for("application-staffing", None, worst["observed"], worst["required"]) == (
        "4 nurses on duty for 2,000 persons; the application specified 5 (the law "
        "requires 4) (permit:G)"
    )


def test_a_nurse_going_off_duty_breaks_the_ratio() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(12), doctors=1, nurses=1, security=20)
    d.present(501, local(12))
    assert d.holds("nurse-ratio")  # 501 need 2
    d.present(500, local(12, 0, 30))
    assert not d.holds("nurse-ratio")
    d.staff(local(12, 1), nurses=0)
    assert not d.holds("nurse-ratio")  # 500 persons: the duty does not bind
    d.present(501, local(12, 2))
    assert d.holds("nurse-ratio")


# -- parking -----------------------------------------------------------------------------------

SMALL_LOTS = {"lots": [{"id": "lot-a", "capacity": 100}, {"id": "lot-b", "capacity": 30}]}


@pytest.mark.parametrize("n", [126, 250])
def test_parking_4n_persons_fit_4n_plus_1_do_not(n: int) -> None:
    d = festival({"lots": [{"id": "lot-a", "capacity": n}]})
    d.present(4 * n, local(12))
    assert not d.holds("parking-ratio")
    assert d.status()["parking"]["spaces_required"] == n
    d.present(4 * n + 1, local(12, 1))
    alert = only_alert(d, "parking-ratio")
    assert alert["observed"] == {
        "spaces_provided": n, "attendance": 4 * n + 1, "within_rounding": True,
    }  # fmt: skip
    assert alert["required"] == {"spaces": n + 1}
    assert alert["cite"] == "permit:C(6)"
    assert d.status()["parking"]["spaces_required"] == n + 1


def test_parking_adds_every_lot() -> None:
    d = festival(SMALL_LOTS)
    assert d.status()["parking"]["spaces_provided"] == 130
    d.present(520, local(12))
    assert not d.holds("parking-ratio")
    d.present(521, local(12, 1))
    assert only_alert(d, "parking-ratio")["message"] == (
        "130 car spaces provided; 521 persons need 131; this holds only by rounding up "
        "(kent-ops' reading): 130 car spaces meet one for each whole 4 persons (permit:C(6))"
    )
    d.present(524, local(12, 2))  # 131 whole fours: beyond the rounding
    alert = only_alert(d, "parking-ratio")
    assert alert["worst"]["observed"] == {"spaces_provided": 130, "attendance": 524}
    # Its time splits where the rounding stops carrying it: only the second part is proven.
    assert [(x["basis"], when(x["start"])) for x in alert["stretches"]] == [
        ("rounding", local(12, 1)),
        ("measured", local(12, 2)),
    ]


# -- overnight-housing ---------------------------------------------------------------------------


ACROSS_MIDNIGHT = {
    "windows": [{"start": local(10), "end": local(2, day=5)}],
    "facilities.housing_declared": False,
}
"""One permitted window from 10:00 to 02:00 the next day: the assembly runs past midnight."""


def overnight(changes: dict[str, Any] | None = None, *, from_: datetime) -> Driver:
    d = festival({**ACROSS_MIDNIGHT, **(changes or {})}, at=from_)
    d.present(10, from_)
    return d


def test_overnight_holds_after_local_midnight_not_before() -> None:
    d = overnight(from_=local(23))
    d.tick(local(23, 59, 59))
    assert not d.holds("overnight-housing")
    d.tick(local(0, 0, 1, day=5))
    assert d.holds("overnight-housing")
    alert = only_alert(d, "overnight-housing")
    midnight = datetime(2027, 7, 5, 0, 0, tzinfo=NY)
    assert when(alert["since"]) == midnight
    assert when(alert["since"]) == datetime(2027, 7, 5, 4, 0, tzinfo=UTC)
    assert alert["cite"] == "permit:B(14), permit:C(7)"
    assert alert["observed"] == {"attendance": 10}


def test_overnight_is_dated_at_midnight_with_a_pending_delay_and_no_ticks() -> None:
    d = overnight({"alerting.pending_s": 10}, from_=local(23))
    d.present(11, local(0, 30, day=5))  # the next thing the engine hears
    alert = only_alert(d, "overnight-housing")
    assert when(alert["since"]) == local(0, 0, day=5)
    assert when(alert["raised_at"]) == local(0, 0, 10, day=5)


def test_utc_midnight_is_not_the_events_midnight() -> None:
    d = overnight(from_=local(19))  # 23:00 UTC
    d.tick(local(21))  # 01:00 UTC the next day, still 4 July in Kent
    assert not d.holds("overnight-housing")
    d.tick(local(23, 59))
    assert not d.holds("overnight-housing")


def test_declared_housing_never_raises_overnight() -> None:
    d = overnight({"facilities.housing_declared": True}, from_=local(23))
    d.tick(local(3, day=5))
    assert not d.holds("overnight-housing")
    assert d.alerts("overnight-housing") == []


def test_an_empty_site_at_midnight_is_not_overnight() -> None:
    d = overnight(from_=local(23))
    d.present(0, local(23, 50))
    d.present(5, local(0, 10, day=5))  # a new crowd after midnight
    d.tick(local(0, 20, day=5))
    assert not d.holds("overnight-housing")


def test_overnight_ends_when_the_site_empties() -> None:
    d = overnight(from_=local(23))
    d.tick(local(0, 30, day=5))
    d.present(0, local(1, day=5))
    assert not d.holds("overnight-housing")
    assert when(only_alert(d, "overnight-housing")["ended_at"]) == local(1, day=5)


def test_a_counter_restart_that_brings_persons_starts_presence() -> None:
    d = festival(ACROSS_MIDNIGHT, at=local(23))
    d.gate("north", local(23), 10, 10)
    d.gate("north", local(23, 10), 5, 0, seq=0)  # restart: 5 more inside
    assert d.attendance == 5
    d.tick(local(0, 1, day=5))
    assert d.holds("overnight-housing")


# -- vehicles, lots, security ----------------------------------------------------------------


def test_vehicles_at_one_time_counts_cars_in_all_lots() -> None:
    d = festival({"limits.vehicles_at_one_time": 800})
    d.lot("lot-a", local(12), 500)
    d.lot("lot-b", local(12), 300)
    assert not d.holds("vehicles-at-one-time")
    assert d.status()["parking"]["occupied"] == 800
    d.lot("lot-b", local(12, 1), 301)
    alert = only_alert(d, "vehicles-at-one-time")
    assert (alert["severity"], alert["cite"]) == ("warning", "permit:B(2)")
    assert alert["observed"] == {"vehicles": 801}


@pytest.mark.parametrize(("capacity", "full"), [(600, 570), (20, 19), (100, 95)])
def test_lot_full_at_exactly_95_percent(capacity: int, full: int) -> None:
    d = festival({"lots": [{"id": "lot-a", "capacity": capacity}]})
    d.lot("lot-a", local(12), full - 1)
    assert not d.holds("lot-full")
    d.lot("lot-a", local(12, 1), full)
    alert = only_alert(d, "lot-full", "lot-a")
    assert (alert["severity"], alert["cite"]) == ("warning", "permit:C(6)")
    assert alert["observed"]["occupied"] == full
    assert alert["observed"]["share"] == 0.95
    d.lot("lot-a", local(12, 2), full - 1)
    assert not d.holds("lot-full")


def test_lot_full_is_per_lot() -> None:
    d = festival()
    d.lot("lot-a", local(12), 600)
    d.lot("lot-b", local(12), 427)  # 94.9%
    assert d.holds("lot-full", "lot-a")
    assert not d.holds("lot-full", "lot-b")
    d.lot("lot-b", local(12, 1), 450)
    assert {a["subject"] for a in d.alerts("lot-full")} == {"lot-a", "lot-b"}
    assert (
        only_alert(d, "lot-full", "lot-b")["message"]
        == "lot lot-b is 100% full (450 of 450) (permit:C(6))"
    )


def test_security_staffing_only_inside_a_window() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(9), doctors=1, nurses=1, security=19)
    d.tick(local(9, 59))
    assert not d.holds("security-staffing")
    d.tick(WINDOW_START)
    assert d.holds("security-staffing")
    alert = only_alert(d, "security-staffing")
    assert when(alert["since"]) == WINDOW_START
    assert alert["observed"] == {"security_on_duty": 19}
    assert alert["required"] == {"security": 20}
    assert (alert["severity"], alert["cite"]) == ("warning", "permit:B(8)")
    d.staff(local(12), security=20)
    assert not d.holds("security-staffing")
    d.staff(local(13), security=0)
    assert d.holds("security-staffing")
    d.tick(WINDOW_END)
    assert not d.holds("security-staffing")
    assert when(d.alerts("security-staffing")[-1]["ended_at"]) == WINDOW_END


def test_an_engine_started_inside_a_window_sees_short_security_at_once() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.pending_s": 10}))
    d.tick(local(12))
    assert d.pending("security-staffing")[0]["since"] == utc(local(12))
    d.tick(local(13))
    assert when(only_alert(d, "security-staffing")["raised_at"]) == local(12, 0, 10)


# -- sensors -----------------------------------------------------------------------------------


def test_sensor_offline_by_availability() -> None:
    d = festival()
    d.availability("lot-b", local(12, 1), "offline")
    alert = only_alert(d, "sensor-offline", "lot-b")
    assert (alert["severity"], alert["cite"]) == ("data", "—")
    assert alert["observed"]["available"] is False
    assert "offline (its availability says so)" in alert["message"]
    assert d.status()["sensors"]["lot-b"]["online"] is False
    assert d.status()["attendance"]["uncertain"] is False  # a lot is not a gate
    d.availability("lot-b", local(12, 2), "online")
    assert not d.holds("sensor-offline", "lot-b")
    assert when(only_alert(d, "sensor-offline", "lot-b")["ended_at"]) == local(12, 2)


def test_a_badge_reader_can_be_offline_by_availability() -> None:
    d = festival()
    d.availability("first-aid", local(12, 1), "offline")
    assert d.holds("sensor-offline", "first-aid")


def stale_permit() -> dict[str, Any]:
    return {"alerting.pending_s": 0, "alerting.clear_s": 0, "alerting.stale_after_s": 60}


def test_sensor_offline_by_silence() -> None:
    d = Driver(permit_variant(stale_permit()))
    t0 = local(12)
    d.gate("north", t0, 0, 0)
    d.gate("north", t0 + timedelta(seconds=30), 5, 0)
    d.tick(t0 + timedelta(seconds=60) - US)
    assert d.alerts("sensor-offline") == []
    d.tick(t0 + timedelta(seconds=60))
    # silence is measured from the engine's first instant for those never heard
    assert {a["subject"] for a in d.alerts("sensor-offline")} == {"south", "lot-a", "lot-b"}
    assert d.status()["attendance"]["uncertain"] is True
    d.tick(t0 + timedelta(seconds=90) - US)
    assert not d.holds("sensor-offline", "north")
    d.tick(t0 + timedelta(seconds=90))
    north = only_alert(d, "sensor-offline", "north")
    assert when(north["since"]) == t0 + timedelta(seconds=90)
    assert north["observed"]["stale"] is True
    assert north["message"] == "gate sensor north is silent; its figures may be behind"
    d.gate("north", t0 + timedelta(seconds=100), 6, 0)
    assert not d.holds("sensor-offline", "north")
    assert when(only_alert(d, "sensor-offline", "north")["ended_at"]) == t0 + timedelta(seconds=100)


def test_a_badge_reader_is_never_stale_from_silence() -> None:
    d = Driver(permit_variant(stale_permit()))
    d.staff(local(12), doctors=1)
    d.tick(local(15))
    assert not d.holds("sensor-offline", "first-aid")
    assert d.status()["sensors"]["first-aid"]["online"] is True


def test_a_manual_tally_is_never_stale_and_only_a_note_when_its_view_goes() -> None:
    """It publishes on taps only: silence is no fault, and it never makes counts uncertain."""
    d = Driver(permit_variant(stale_permit()))
    d.tick(local(12))
    d.tick(local(14))
    assert not d.holds("sensor-offline", "north-manual")
    assert d.status()["gates"]["north-manual"]["manual"] is True
    d.feed(d.topics.availability("north-manual"), "online", local(14))
    d.gate("north-manual", local(14, 0, 30), 3, 0)
    d.tick(local(16))  # hours of silence after a tap
    assert not d.holds("sensor-offline", "north-manual")
    d.feed(d.topics.availability("north-manual"), "offline", local(16, 0, 1))
    assert d.holds("sensor-offline", "north-manual")


def test_a_stale_gate_heard_again_ends_its_alert_at_that_message() -> None:
    """Even when the count it brings leaves attendance where no other rule flips."""
    d = Driver(permit_variant(stale_permit()))
    d.staff(local(12), doctors=1, nurses=1, security=20)
    d.gate("north", local(12), 10, 0)
    for sensor in ("south", "lot-a", "lot-b"):
        d.feed(d.topics.availability(sensor), "online", local(12))
    d.gate("south", local(12, 0, 50), 0, 0)
    d.lot("lot-a", local(12, 0, 50), 0)
    d.lot("lot-b", local(12, 0, 50), 0)
    d.tick(local(12, 1))
    assert d.holds("sensor-offline", "north")
    d.gate("north", local(12, 1, 10), 11, 0)
    d.tick(local(12, 1, 40))
    alert = only_alert(d, "sensor-offline", "north")
    assert when(alert["ended_at"]) == local(12, 1, 10)


def test_clock_skew_on_the_wall_clock() -> None:
    d = Driver(permit_variant(QUICK), clock="wall")
    received = local(12)
    d.gate("north", received - timedelta(seconds=30), 1, 0, received=received)
    assert not d.holds("clock-skew")
    d.gate(
        "north", received - timedelta(seconds=31), 2, 0, received=received + timedelta(seconds=1)
    )
    alert = only_alert(d, "clock-skew", "north")
    assert alert["observed"] == {"skew_s": -32.0}
    assert alert["severity"] == "data"
    assert when(alert["since"]) == received + timedelta(seconds=1)  # timed on receipt
    d.gate("north", received + timedelta(seconds=2), 3, 0, received=received + timedelta(seconds=2))
    assert not d.holds("clock-skew")
    d.lot("lot-a", received, 0)  # a lot's clock is watched too (ts 31 s behind receipt)
    d.feed(
        TOPICS.lot_occupancy("lot-a"),
        lot_occupancy(9, received + timedelta(seconds=40), 1),
        received + timedelta(seconds=3),
    )
    assert d.holds("clock-skew", "lot-a")


def test_clock_skew_is_not_judged_on_the_sensor_clock() -> None:
    d = Driver(permit_variant(QUICK))
    d.gate("north", local(12), 1, 0, received=local(15))
    assert not d.holds("clock-skew")


# -- facility-deficient (permit:C, D, F) -----------------------------------------------------------


def test_a_deficient_item_is_a_breach_at_once_until_marked_ok() -> None:
    d = festival({"alerting.pending_s": 10, "alerting.clear_s": 30})
    r = d.inspector("insp-2", "inspection", local(12), item="C(1)(h)", result="deficient",
                    note="common cup at water station 2")  # fmt: skip
    assert r.accepted
    alert = only_alert(d, "facility-deficient", "C(1)(h)")
    assert when(alert["raised_at"]) == local(12)  # pending 0 whatever the permit says
    assert alert["cite"] == "permit:C(1)(h), permit:G"
    assert alert["severity"] == "breach"
    assert alert["message"] == (
        "checklist item C(1)(h) marked deficient: common cup at water station 2 "
        "(permit:C(1)(h), permit:G)"
    )
    assert d.status()["checklist"]["C(1)(h)"] == {
        "result": "deficient",
        "by": "insp-2",
        "at": utc(local(12)),
        "note": "common cup at water station 2",
    }
    d.inspector("insp-2", "inspection", local(12, 5), item="C(1)(h)", result="ok")
    alert = only_alert(d, "facility-deficient", "C(1)(h)")
    assert when(alert["ended_at"]) == local(12, 5)
    d.tick(local(12, 5, 30))
    assert when(only_alert(d, "facility-deficient")["cleared_at"]) == local(12, 5, 30)


def test_n_a_also_ends_a_deficiency() -> None:
    d = festival()
    d.inspector("i", "inspection", local(12), item="C(5)", result="deficient", note="no sink")
    assert d.holds("facility-deficient", "C(5)")
    d.inspector("i", "inspection", local(12, 1), item="C(5)", result="n/a")
    assert not d.holds("facility-deficient", "C(5)")


def test_a_deficient_mark_needs_a_note() -> None:
    d = festival()
    r = d.inspector("i", "inspection", local(12), item="C(3)", result="deficient")
    assert not r.accepted
    assert r.reason == "a deficient mark needs a note saying what was found"
    assert not d.holds("facility-deficient")
    assert d.status()["rejected"] == 1
    assert d.status()["checklist"] == {}


def test_an_item_that_does_not_apply_is_rejected() -> None:
    d = festival()
    r = d.inspector("i", "inspection", local(12), item="C(7)", result="deficient", note="none")
    assert not r.accepted
    assert r.reason == "checklist item 'C(7)' is unknown or does not apply to this permit"
    assert d.status()["rejected"] == 1
    overnight_permit = festival({"facilities.overnight": True})
    assert overnight_permit.inspector("i", "inspection", local(12), item="C(7)",
                                      result="deficient", note="no tents").accepted  # fmt: skip
    assert overnight_permit.holds("facility-deficient", "C(7)")


def test_food_items_apply_even_when_no_food_is_served() -> None:
    """permit:C(5)'s first sentence (an adequate supply of food) has no condition."""
    d = festival({"facilities.food_served": False})
    assert d.inspector("i", "inspection", local(12), item="C(5)", result="ok").accepted


def test_an_unknown_item_is_rejected() -> None:
    d = festival()
    assert not d.inspector("i", "inspection", local(12), item="C(4)", result="ok").accepted


# -- what no rule should do ------------------------------------------------------------------


def test_a_quiet_compliant_festival_raises_nothing() -> None:
    d = festival(at=local(9))  # staff badge in before the window opens
    for minute in range(0, 60, 5):
        d.present(900 + minute, local(12, minute))
        d.lot("lot-a", local(12, minute), 100)
        d.lot("lot-b", local(12, minute), 100)
    d.tick(local(13))
    assert d.alerts() == []
    assert d.status()["pending"] == []
    assert d.status()["admit"] is True


def test_time_never_goes_back_for_a_late_message() -> None:
    d = festival()
    d.present(10, local(12))
    late = d.gate("south", local(11), 5, 0)
    assert late.accepted
    assert late.time == local(12)
    assert d.engine.now == local(12)
    assert d.attendance == 15
    assert isinstance(late.time, datetime)


def test_every_rule_the_pass_finds_has_its_own_condition_and_the_others_none() -> None:
    """A rule left out of the rule pass, or one in it without a condition, never fires."""
    from kent_ops.core.rules import _EVALUATED, RULES
    from kent_ops.core.rules.base import Rule

    evaluated = {r.name for r in _EVALUATED}
    raised_elsewhere = set(RULES) - evaluated
    assert raised_elsewhere == {
        "counter-reset",
        "sensor-gap",
        "evidence-storage",
        "broker-session",
        "evidence-rollback",
        "clock-jump",
        "evidence-flood",
    }
    for rule in _EVALUATED:
        assert type(rule).holds is not Rule.holds, rule.name
        assert type(rule).measure is not Rule.measure, rule.name
    for name in raised_elsewhere:
        assert type(RULES[name]).holds is Rule.holds, name
