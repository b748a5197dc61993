"""The alert lifecycle (docs/protocol.md, alerts) with real delays: pending_s = 10, clear_s = 30.

One condition is driven on and off (lot-a full or not) at instants the test writes down,
and every time on the alert is checked to the microsecond: ``since`` when the condition
first held, ``raised_at = since + pending_s``, ``ended_at`` when it stopped, and
``cleared_at = ended_at + clear_s``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import msgspec
import pytest
from core_support import QUICK, US, Driver, local, permit_variant, utc, when
from wire_support import lot_occupancy

from kent_ops.core.alerts import KEPT_ON_ALERT

LIFE = {"alerting.pending_s": 10, "alerting.clear_s": 30, "alerting.stale_after_s": 864000}
T0 = local(12)
FULL, NOT_FULL = 570, 100


def s(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def lifecycle(changes: dict[str, Any] | None = None) -> Driver:
    d = Driver(permit_variant({**LIFE, **(changes or {})}))
    d.present(500, local(9), gate="south")  # persons for the cars: never fewer than they
    d.staff(local(9), doctors=1, nurses=10, security=20)  # before the window: nothing holds
    d.lot("lot-a", local(9), NOT_FULL)
    d.present(600, local(11), gate="south")
    d.collect = d.engine.collect_changes()  # type: ignore[attr-defined]
    return d


def full(d: Driver, at: float, occupied: int = FULL) -> None:
    assert d.lot("lot-a", s(at), occupied).accepted


def empty(d: Driver, at: float) -> None:
    assert d.lot("lot-a", s(at), NOT_FULL).accepted


def lot_alerts(d: Driver) -> list[dict[str, Any]]:
    return d.alerts("lot-full", "lot-a")


def the_alert(d: Driver) -> dict[str, Any]:
    (alert,) = lot_alerts(d)
    return alert


def test_a_condition_gone_before_pending_s_raises_nothing_but_is_listed_meanwhile() -> None:
    d = lifecycle()
    full(d, 0)
    assert d.status()["pending"] == [{"rule": "lot-full", "subject": "lot-a", "since": utc(T0)}]
    d.tick(s(10) - US)
    assert len(d.pending("lot-full")) == 1
    assert lot_alerts(d) == []
    empty(d, 10 - 0.000001)
    assert d.status()["pending"] == []
    d.tick(s(3600))
    assert lot_alerts(d) == []
    assert d.status()["active_alerts"] == []


def test_raised_at_is_since_plus_pending_s_exactly_even_when_ticked_an_hour_later() -> None:
    d = lifecycle()
    full(d, 0)
    d.tick(s(3600))
    alert = the_alert(d)
    assert when(alert["since"]) == s(0)
    assert when(alert["raised_at"]) == s(10)
    assert alert["state"] == "active"
    assert alert["ended_at"] is None
    assert d.pending("lot-full") == []
    assert d.status()["active_alerts"] == [alert["id"]]


def test_raised_at_is_exact_when_the_next_message_comes_late() -> None:
    d = lifecycle()
    full(d, 0.25)
    full(d, 25, occupied=580)  # no tick in between
    assert when(the_alert(d)["raised_at"]) == s(10.25)


def test_a_condition_that_held_exactly_pending_s_is_raised() -> None:
    d = lifecycle()
    full(d, 0)
    empty(d, 10)
    alert = the_alert(d)
    assert when(alert["raised_at"]) == s(10)
    assert when(alert["ended_at"]) == s(10)


def test_ended_and_cleared_times() -> None:
    d = lifecycle()
    full(d, 0)
    empty(d, 42)
    alert = the_alert(d)
    assert when(alert["ended_at"]) == s(42)
    assert alert["state"] == "active"  # ended, not yet cleared
    assert alert["cleared_at"] is None
    d.tick(s(72) - US)
    assert the_alert(d)["state"] == "active"
    assert d.status()["active_alerts"] == [alert["id"]]
    d.tick(s(500))
    alert = the_alert(d)
    assert alert["state"] == "cleared"
    assert when(alert["cleared_at"]) == s(72)
    assert when(alert["ended_at"]) == s(42)
    assert d.status()["active_alerts"] == []


def test_back_within_clear_s_continues_the_same_alert() -> None:
    d = lifecycle()
    full(d, 0)
    empty(d, 20)
    first_id = the_alert(d)["id"]
    full(d, 49, occupied=600)  # 29 s after it ended
    alert = the_alert(d)
    assert alert["id"] == first_id
    assert alert["ended_at"] is None
    assert when(alert["since"]) == s(0)
    assert alert["worst"]["observed"]["occupied"] == 600
    empty(d, 60)
    d.tick(s(200))
    alert = the_alert(d)
    assert when(alert["ended_at"]) == s(60)
    assert when(alert["cleared_at"]) == s(90)


def test_back_after_clear_s_opens_a_new_alert() -> None:
    d = lifecycle()
    full(d, 0)
    empty(d, 20)
    full(d, 50)  # exactly clear_s after it ended: the first alert has cleared
    d.tick(s(100))
    first, second = lot_alerts(d)
    assert first["id"] != second["id"]
    assert first["state"] == "cleared"
    assert when(first["cleared_at"]) == s(50)
    assert when(second["since"]) == s(50)
    assert when(second["raised_at"]) == s(60)
    assert d.status()["active_alerts"] == [second["id"]]


def test_back_after_clear_s_but_briefly_raises_nothing_new() -> None:
    d = lifecycle()
    full(d, 0)
    empty(d, 20)
    full(d, 100)
    empty(d, 105)
    d.tick(s(1000))
    assert len(lot_alerts(d)) == 1


def test_alert_ids_count_up() -> None:
    d = lifecycle()
    full(d, 0)
    d.tick(s(10))
    d.availability("north", s(11), "offline")
    d.tick(s(21))
    ids = [a["id"] for a in d.alerts()]
    assert ids == ["A-0001", "A-0002"]


def test_changes_carry_each_changed_alert_once() -> None:
    d = lifecycle()
    full(d, 0)
    assert d.engine.collect_changes().alerts == []  # pending is not published as an alert
    d.tick(s(15))
    changes = d.engine.collect_changes()
    assert [a.id for a in changes.alerts] == ["A-0001"]
    assert changes.alerts[0].state == "active"
    assert not d.engine.collect_changes()
    empty(d, 20)
    (changed,) = d.engine.collect_changes().alerts
    assert changed.ended_at == s(20)
    d.tick(s(50))
    (changed,) = d.engine.collect_changes().alerts
    assert changed.state == "cleared"


def test_acknowledgements_and_notes_attach_to_the_alert() -> None:
    d = lifecycle()
    full(d, 0)
    d.tick(s(10))
    alert_id = the_alert(d)["id"]
    d.engine.collect_changes()
    ack = d.inspector("insp-2", "ack", s(12), alert=alert_id, comment="Called the organiser")
    assert ack.accepted
    note = d.inspector("insp-3", "note", s(13), text="Overflow to lot-b", alert=alert_id)
    assert note.accepted
    alert = the_alert(d)
    assert alert["acknowledged"] == [
        {"by": "insp-2", "at": utc(s(12)), "comment": "Called the organiser"}
    ]
    assert alert["notes"] == [
        {
            "by": "insp-3",
            "at": utc(s(13)),
            "text": "Overflow to lot-b",
            "alert": alert_id,
        }
    ]
    assert d.status()["notes"][-1]["text"] == "Overflow to lot-b"
    (changed,) = d.engine.collect_changes().alerts
    assert changed.id == alert_id
    assert len(changed.acknowledged) == 1


def test_a_cleared_alert_can_still_be_acknowledged() -> None:
    d = lifecycle()
    full(d, 0)
    empty(d, 15)
    d.tick(s(100))
    alert_id = the_alert(d)["id"]
    assert d.inspector("insp-1", "ack", s(101), alert=alert_id).accepted
    assert the_alert(d)["acknowledged"][0]["comment"] == ""


def test_a_note_without_an_alert_goes_to_the_status_only() -> None:
    d = lifecycle()
    assert d.inspector("insp-1", "note", s(0), text="Gates open on time").accepted
    assert d.status()["notes"] == [
        {"by": "insp-1", "at": utc(s(0)), "text": "Gates open on time",
         "alert": None}
    ]  # fmt: skip


def test_the_status_keeps_the_last_20_notes() -> None:
    d = lifecycle()
    for i in range(25):
        d.inspector("insp-1", "note", s(i), text=f"note {i}")
    notes = d.status()["notes"]
    assert [n["text"] for n in notes] == [f"note {i}" for i in range(5, 25)]


def over_maximum(d: Driver, at: float) -> None:
    assert d.present(d.engine.permit.max_at_one_time + 1, s(at)).accepted


def test_an_attendance_alert_raised_while_a_gate_is_offline_is_uncertain() -> None:
    d = lifecycle()
    d.availability("south", s(0), "offline")
    assert d.status()["attendance"]["uncertain"] is True
    over_maximum(d, 1)
    d.tick(s(20))
    assert d.alerts("max-at-one-time")[0]["uncertain"] is True


def test_alerts_not_drawn_from_the_gate_counts_stay_certain_while_a_gate_is_down() -> None:
    """A full lot, an offline sensor or an inspector's finding is not in doubt because
    a gate counter is: only figures computed from attendance are."""
    d = lifecycle()
    d.availability("south", s(0), "offline")
    full(d, 1)
    d.tick(s(20))
    assert the_alert(d)["uncertain"] is False
    assert d.alerts("sensor-offline", "south")[0]["uncertain"] is False


def test_an_alert_raised_with_every_gate_online_is_certain() -> None:
    d = lifecycle()
    d.availability("lot-b", s(0), "offline")  # a lot offline leaves the counts certain
    over_maximum(d, 1)
    d.tick(s(20))
    assert d.alerts("max-at-one-time")[0]["uncertain"] is False
    assert d.status()["attendance"]["uncertain"] is False


def test_uncertain_is_decided_when_the_alert_is_raised() -> None:
    d = lifecycle()
    d.availability("south", s(0), "offline")
    over_maximum(d, 1)
    d.availability("south", s(5), "online")  # back before the alert is raised
    d.tick(s(20))
    assert d.alerts("max-at-one-time")[0]["uncertain"] is False


def test_an_alert_cites_the_evidence_record_that_started_it() -> None:
    d = lifecycle()
    d.feed(d.topics.lot_occupancy("lot-a"), lot_occupancy(99, s(0), FULL), s(0), record_id=17)
    d.feed(d.topics.lot_occupancy("lot-a"), lot_occupancy(100, s(5), FULL), s(5), record_id=18)
    d.tick(s(10))
    # The record by id; its hash is the log's to fill in (kent_ops.evidence.cite).
    assert the_alert(d)["evidence"] == {"record": 17, "hash": None}


# -- ADMIT / HOLD -------------------------------------------------------------------------------

HYSTERESIS = {**LIFE, "alerting.hold_at": 100, "alerting.resume_below": 90}


def admit_by_gate(d: Driver) -> dict[str, bool]:
    return {gate: c.admit for gate, c in d.engine.commands().items()}


def test_admit_hold_hysteresis() -> None:
    d = Driver(permit_variant(HYSTERESIS))
    d.staff(s(0), doctors=1, nurses=10, security=20)
    d.engine.collect_changes()
    seen = []
    for i, n in enumerate([99, 100, 95, 90, 89, 99, 101]):
        d.present(n, s(i + 1))
        seen.append(d.status()["admit"])
    assert seen == [True, False, False, False, True, True, False]


def test_gate_commands_are_published_when_they_change() -> None:
    d = Driver(permit_variant(HYSTERESIS))
    d.staff(s(0), doctors=1, nurses=10, security=20)
    first = d.engine.collect_changes().commands
    assert set(first) == {"north", "south", "north-manual"}
    assert first["north"].admit is True
    d.present(50, s(1))
    assert d.engine.collect_changes().commands == {}  # still ADMIT: nothing to publish
    d.present(100, s(2))
    commands = d.engine.collect_changes().commands
    assert msgspec.to_builtins(commands["south"]) == {
        "admit": False,
        "attendance": 100,
        "hold_at": 100,
        "resume_below": 90,
        "reason": "HOLD: attendance reached 100; admit again below 90",
        "hold_in_s": None,
    }
    d.present(89, s(3))
    assert d.engine.collect_changes().commands["north"].admit is True


def test_without_an_issued_permit_every_gate_holds_at_500() -> None:
    d = Driver(permit_variant({**LIFE, "permit.status": "pending"}))
    d.staff(s(0), doctors=1, nurses=10, security=20)
    d.present(499, s(1))
    assert set(admit_by_gate(d).values()) == {True}
    d.present(500, s(2))  # no one may be admitted past the threshold
    assert admit_by_gate(d) == {"north": False, "south": False, "north-manual": False}
    assert "permit:A" in d.engine.commands()["north"].reason
    assert d.status()["admit"] is False
    assert not d.holds("permit-required")  # 500 is no breach: more than 500 is
    d.present(501, s(3))
    assert d.alerts("permit-required") == []  # the hold comes before the alert matures
    d.present(499, s(4))
    assert set(admit_by_gate(d).values()) == {True}


def test_outside_the_window_more_than_500_hold_every_gate() -> None:
    d = Driver(permit_variant(LIFE))
    d.staff(local(23), doctors=1, nurses=10, security=20)
    d.present(800, local(23))
    assert d.status()["admit"] is True
    d.tick(local(23, 30))
    assert d.status()["admit"] is False
    assert set(admit_by_gate(d).values()) == {False}


# -- counter-reset as an event --------------------------------------------------------------


def test_counter_resets_within_clear_s_continue_one_alert() -> None:
    d = lifecycle()
    d.gate("north", s(0), 100, 0)
    d.gate("north", s(1), 5, 0, seq=0)
    d.gate("north", s(2), 9, 0, seq=1)
    d.gate("north", s(20), 3, 0, seq=0)  # a second restart 19 s later
    (alert,) = d.alerts("counter-reset", "north")
    assert when(alert["ended_at"]) == s(20)
    d.tick(s(50) - US)
    assert d.alerts("counter-reset")[0]["state"] == "active"
    d.tick(s(50))
    assert when(d.alerts("counter-reset")[0]["cleared_at"]) == s(50)
    d.gate("north", s(55), 4, 0, seq=1)
    d.gate("north", s(60), 1, 0, seq=0)
    assert [a["state"] for a in d.alerts("counter-reset")] == ["cleared", "active"]
    assert d.status()["gates"]["north"]["in"] == 100 + 9 + 4 + 1
    assert d.status()["gates"]["north"]["restarts"] == 3


@pytest.mark.parametrize("pending_s", [0, 10])
def test_pending_zero_raises_at_once(pending_s: int) -> None:
    d = lifecycle({"alerting.pending_s": pending_s})
    full(d, 0)
    if pending_s:
        assert lot_alerts(d) == []
    else:
        assert when(the_alert(d)["raised_at"]) == s(0)


# -- figures that agree with the screen ------------------------------------------------------


def test_an_active_alert_is_republished_with_its_live_figures() -> None:
    d = Driver(permit_variant({**LIFE, "alerting.pending_s": 0}))
    d.staff(s(0), doctors=1, nurses=2, security=20)
    d.present(2648, s(1))
    d.engine.collect_changes()
    (alert,) = d.alerts("nurse-ratio")
    assert alert["observed"] == {"nurses_on_duty": 2, "attendance": 2648}
    d.staff(s(2), nurses=0)  # the staffing panel now says 0 nurses
    changed = d.engine.collect_changes().alerts
    assert [a.id for a in changed] == [alert["id"]]
    assert changed[0].observed == {"nurses_on_duty": 0, "attendance": 2648}
    assert changed[0].message.startswith("0 nurses on duty; 2,648 persons need 6")
    assert changed[0].worst.observed == {"nurses_on_duty": 0, "attendance": 2648}


def test_an_alert_that_ended_quotes_the_figures_that_ended_it() -> None:
    d = Driver(permit_variant({**LIFE, "alerting.pending_s": 0}))
    d.staff(s(0), doctors=1, nurses=10, security=20)
    d.present(4003, s(1))
    d.present(3998, s(2))
    (alert,) = d.alerts("max-at-one-time")
    assert when(alert["ended_at"]) == s(2)
    assert alert["observed"] == {"attendance": 3998}
    assert alert["message"].startswith("3,998 persons present; the permit allows 4,000")
    assert alert["worst"]["observed"] == {"attendance": 4003}  # the breach stays on record


def test_an_alert_carries_the_first_and_the_latest_acknowledgements_and_notes() -> None:
    """However many are sent, one alert's message stays far below the broker's packet limit."""
    d = Driver(permit_variant(QUICK))
    d.present(600, local(12))  # no doctor: doctor-on-duty
    (alert,) = d.alerts("doctor-on-duty")
    for i in range(30):
        t = local(12, 1, i)
        d.inspector("insp-1", "ack", t, alert=alert["id"], comment=f"ack {i} " + "x" * 3900)
        d.inspector("insp-1", "note", t, alert=alert["id"], text=f"note {i} " + "y" * 3900)
    (alert,) = d.alerts("doctor-on-duty")
    comments = [a["comment"].split()[1] for a in alert["acknowledged"]]
    assert len(comments) == KEPT_ON_ALERT
    assert comments[0] == "0"
    assert comments[1:] == [str(i) for i in range(30 - KEPT_ON_ALERT + 1, 30)]
    assert len(alert["notes"]) == KEPT_ON_ALERT
    assert len(msgspec.json.encode(alert)) < 200_000
