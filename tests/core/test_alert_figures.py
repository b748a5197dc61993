"""Every rule's alert carries exactly its figures: what was observed and what is required.

The figures are what the report tabulates and an inspector reads; each one is pinned
here as the engine publishes it, for a day that breaks every rule.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from core_support import NY, QUICK, Driver, local, permit_variant, when

from kent_ops.core.engine import Engine


def figures(d: Driver) -> dict[tuple[str, str | None], tuple[Any, Any, bool]]:
    """Each alert's (observed, required, uncertain) as first raised, by (rule, subject)."""
    return {(a["rule"], a["subject"]): (a["observed"], a["required"], a["uncertain"])
            for a in d.alerts()}  # fmt: skip


def test_a_day_that_breaks_every_duty() -> None:
    d = Driver(permit_variant({**QUICK, "limits.max_collective": 5000}))
    d.staff(local(12), doctors=0, nurses=1, security=3)
    d.present(4100, local(12))
    d.lot("lot-a", local(12), 590)
    d.lot("lot-b", local(12), 440)
    d.gate("south", local(12, 1), 1200, 0)
    d.inspector("insp-1", "inspection", local(12, 2), item="C(2)(a)", result="deficient",
                note="toilets overflowing")  # fmt: skip
    d.gate("north", local(12, 3), 5, 0, seq=0)  # the north counter restarted
    got = figures(d)
    assert got == {
        ("security-staffing", None): ({"security_on_duty": 3}, {"security": 20}, False),
        ("max-at-one-time", None): ({"attendance": 5305}, {"attendance_at_most": 4000}, False),
        ("doctor-on-duty", None): (
            {"doctors_on_duty": 0, "attendance": 5305}, {"doctors": 1}, False,
        ),
        ("nurse-ratio", None): ({"nurses_on_duty": 1, "attendance": 5305}, {"nurses": 11}, False),
        ("lot-full", "lot-a"): (
            {"occupied": 590, "capacity": 600, "share": 0.983}, {"share_below": 0.95}, False,
        ),
        ("lot-full", "lot-b"): (
            {"occupied": 440, "capacity": 450, "share": 0.978}, {"share_below": 0.95}, False,
        ),
        ("max-collective", None): ({"entries": 5305}, {"entries_at_most": 5000}, False),
        ("parking-ratio", None): (
            {"spaces_provided": 1050, "attendance": 5305}, {"spaces": 1327}, False,
        ),
        ("facility-deficient", "C(2)(a)"): (
            {"result": "deficient", "note": "toilets overflowing"}, {"result": "ok"}, False,
        ),
        ("counter-reset", "north"): ({"seq": 0, "restarts": 1}, {}, False),
    }  # fmt: skip


def test_past_midnight_without_housing() -> None:
    permit = permit_variant({**QUICK, "windows": [{"start": local(20), "end": local(3, day=5)}]})
    d = Driver(permit)
    d.staff(local(20), doctors=1, nurses=10, security=20)
    d.present(600, local(21))
    d.tick(local(0, 0, 1, day=5))
    assert figures(d)[("overnight-housing", None)] == (
        {"attendance": 600}, {"housing_declared": True}, False,
    )  # fmt: skip


def test_past_the_permitted_hours_and_the_deputies_are_told_why() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(23), doctors=1, nurses=10, security=20)
    d.present(600, local(23, 40))  # 600 admitted after the window ended at 23:30
    observed = {
        "attendance": 600, "permit_issued": True, "inside_window": False,
        "ended_at": "2027-07-04T23:30:00-04:00", "ended_by": "window",
        "dispersal": "admitted", "admitted_at": "2027-07-04T23:40:00-04:00",
    }  # fmt: skip
    assert figures(d)[("permit-required", None)] == (
        observed, {"attendance_at_most": 500}, False,
    )  # fmt: skip
    assert d.engine.commands()["north"].reason == (
        "HOLD: the permitted hours ended at 23:30: admit no one (permit:A)"
    )
    # A higher figure between two rule passes is judged with the permit as it stood.
    d.present(700, local(23, 41))
    d.present(650, local(23, 42))
    (alert,) = d.alerts("permit-required")
    assert alert["worst"]["observed"] == {**observed, "attendance": 700}


def test_without_an_issued_permit() -> None:
    d = Driver(permit_variant({**QUICK, "permit.status": "pending"}))
    d.staff(local(12), doctors=1, nurses=10, security=20)
    d.present(600, local(12))
    assert figures(d)[("permit-required", None)] == (
        {"attendance": 600, "permit_issued": False, "inside_window": True},
        {"attendance_at_most": 500},
        False,
    )


def test_a_badge_reader_whose_clock_is_off() -> None:
    d = Driver(permit_variant(QUICK), clock="wall")
    d.staff(local(12), doctors=1, nurses=1, security=20)
    d.badge(local(12, 1) + timedelta(seconds=95.5), "S-9", "security", "on", received=local(12, 1))
    assert figures(d)[("clock-skew", "first-aid")] == (
        {"skew_s": 95.5}, {"skew_s_at_most": 30}, False,
    )  # fmt: skip


def test_a_sensor_offline_keeps_the_figures_it_was_first_seen_with() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.stale_after_s": 60}))
    d.staff(local(12), doctors=1, nurses=1, security=20)
    d.present(100, local(12))
    d.lot("lot-b", local(12), 10)
    d.availability("lot-b", local(12, 0, 30), "offline")
    first = {"kind": "lot", "available": False, "stale": False}
    assert figures(d)[("sensor-offline", "lot-b")] == (first, {"online": True}, False)
    for minute in range(1, 4):  # the gates keep talking; lot-b goes silent too
        d.present(100 + minute, local(12, minute))
    (alert,) = d.alerts("sensor-offline", "lot-b")
    assert alert["observed"] == {**first, "stale": True}
    assert alert["worst"]["observed"] == first  # as bad, not worse: the first is kept


# -- alerts that come back ----------------------------------------------------------------


def test_an_alert_back_within_clear_s_is_published_again() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.clear_s": 60}))
    d.staff(local(12), doctors=1, nurses=2, security=20)
    d.present(1100, local(12))
    d.engine.collect_changes()
    d.present(900, local(12, 0, 10))  # ends
    (ended,) = [a for a in d.engine.collect_changes().alerts if a.rule == "nurse-ratio"]
    assert ended.ended_at == local(12, 0, 10)
    d.present(1200, local(12, 0, 20))  # back within clear_s: the same alert, not ended
    (back,) = [a for a in d.engine.collect_changes().alerts if a.rule == "nurse-ratio"]
    assert (back.id, back.ended_at) == (ended.id, None)


def test_a_pending_condition_that_stops_holding_is_dropped_as_another_starts() -> None:
    """One scan ends one condition and starts another: only the new one is pending."""
    d = Driver(permit_variant({**QUICK, "alerting.pending_s": 60}))
    d.badge(local(12), "X-1", "doctor", "on")
    d.staff(local(12), nurses=1, security=20)
    d.present(600, local(12))  # 600 need 2 nurses: nurse-ratio pending
    assert [p["rule"] for p in d.status()["pending"]] == ["nurse-ratio"]
    d.badge(local(12, 0, 10), "X-1", "nurse", "on")  # the doctor now works as a nurse
    assert [p["rule"] for p in d.status()["pending"]] == ["doctor-on-duty"]
    d.tick(local(12, 2))
    assert [a["rule"] for a in d.alerts()] == ["doctor-on-duty"]


# -- what the engine says about each message -------------------------------------------------


def test_a_result_keeps_the_receive_time_as_given_and_a_refusal_has_its_time() -> None:
    d = Driver(permit_variant(QUICK), clock="wall")
    at = local(12)
    result = d.gate("north", at, 100, 0)
    assert result.time == at
    assert result.time.tzinfo is NY  # as received, not converted
    refused = d.gate("north", local(12, 1), 120, 0, seq=2**31 + 11)  # an implausible jump
    assert refused.accepted is False
    assert refused.time == local(12, 1)


def test_a_revocation_in_the_permit_file_is_on_no_ones_word_but_the_file() -> None:
    engine = Engine(permit_variant({**QUICK, "permit.revoked_at": local(12),
                                    "permit.revocation_resolution": "TB-2027-40"}))  # fmt: skip
    (change,) = engine.permit_status.changes
    assert (change.status, change.by, change.resolution) == ("revoked", None, "TB-2027-40")
    assert change.reason == "revoked before the permit file was loaded"


def test_a_pending_condition_that_stops_while_another_alert_holds_starts_afresh() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.pending_s": 60}))
    d.staff(local(12), doctors=1, nurses=1, security=3)
    d.present(100, local(12))
    d.tick(local(12, 1, 1))
    assert [a["rule"] for a in d.alerts()] == ["security-staffing"]  # raised, still holding
    d.present(600, local(12, 2))  # 600 need 2 nurses: pending from 12:02
    d.staff(local(12, 2, 30), nurses=2)  # it stops holding; security is still short
    assert d.status()["pending"] == []
    d.staff(local(12, 5), nurses=1)  # it holds again: pending anew from 12:05
    assert [when(p["since"]) for p in d.pending("nurse-ratio")] == [local(12, 5)]
    d.tick(local(12, 5, 30))
    assert d.alerts("nurse-ratio") == []
