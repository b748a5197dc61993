"""The engine at its edges: before sensor time starts, a Clerk's repeated change, changes.

With ``clock="sensor"`` the engine's time is the payloads' ``ts``; a sensor's
availability carries none, so one that arrives before any timed message is taken
without starting the clock (its receive time is on another clock).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core_support import QUICK, TOPICS, Driver, local, permit_variant
from wire_support import clerk_permit, note

from kent_ops.core import wire
from kent_ops.core.checklist import applicable_items
from kent_ops.core.engine import Changes, Engine, FeedResult
from kent_ops.core.timeutil import to_us

RECEIVED = datetime(2031, 1, 1, 9, 0, tzinfo=UTC)
"""A receive time on another clock than the payloads' (a replay on another day)."""


def availability(
    engine: Engine, sensor: str, state: bytes, record_id: int | None = None
) -> FeedResult:
    return engine.feed(TOPICS.availability(sensor), state, RECEIVED, record_id)


def test_an_availability_before_sensor_time_is_taken_without_starting_the_clock() -> None:
    engine = Engine(permit_variant(QUICK), clock="sensor")
    result = availability(engine, "lot-a", b"offline")
    assert result == FeedResult(True, None, "availability", RECEIVED)
    assert engine.now is None  # the receive time did not become the engine's time
    status = engine.status()
    assert status.sensors["lot-a"].online is False
    assert (status.accepted, status.rejected) == (1, 0)
    assert availability(engine, "lot-a", b"online").accepted
    assert engine.status().sensors["lot-a"].online is True
    assert engine.status().accepted == 2
    assert engine.now is None


def test_a_bad_message_before_sensor_time_is_counted_once_each() -> None:
    engine = Engine(permit_variant(QUICK), clock="sensor")
    first = engine.feed(TOPICS.gate_count("north"), b"not json", RECEIVED)
    assert first.accepted is False
    assert first.reason
    assert (first.kind, first.time) == ("gate", RECEIVED)
    assert engine.status().rejected == 1
    second = availability(engine, "lot-z", b"online")  # no such sensor
    assert second.accepted is False
    assert second.time == RECEIVED
    assert engine.status().rejected == 2
    assert engine.status().accepted == 0
    assert engine.now is None


def test_the_record_of_a_message_before_sensor_time_is_the_one_cited() -> None:
    """The lot said offline before the clock started: the alert cites that record."""
    d = Driver(permit_variant({**QUICK, "alerting.pending_s": 0}))
    assert availability(d.engine, "lot-a", b"offline", record_id=3).accepted
    d.feed(
        TOPICS.inspector("insp-1", "note"),
        note(local(12), "gates open"),
        local(12),
    )
    (alert,) = d.alerts("sensor-offline", "lot-a")
    assert alert["evidence"]["record"] == 3
    assert (
        availability(d.engine, "lot-z", b"online", record_id=4).accepted is False
    )  # a rejection is a record too
    d.present(600, local(12, 1))
    (nurse,) = d.alerts("nurse-ratio")
    assert nurse["evidence"]["record"] == 4


# -- the Clerk ------------------------------------------------------------------------------


def clerk_body(t: datetime, effective: datetime) -> bytes:
    return clerk_permit(t, "revoked", effective, "TB-2027-41", "no doctor on site since 14:10")


def test_a_clerks_change_received_twice_is_recorded_once_and_says_so() -> None:
    d = Driver(permit_variant(QUICK))
    body = clerk_body(local(11), local(11, 30))
    first = d.feed(d.topics.clerk_permit("clerk-1"), body, local(11))
    assert (first.accepted, first.reason) == (True, None)
    again = d.feed(d.topics.clerk_permit("clerk-1"), body, local(11, 5))
    assert again.accepted
    assert again.reason == "duplicate: this change of the permit was already recorded"
    assert len(d.engine.permit_status.changes) == 1


def test_a_clerks_change_keeps_on_whose_word_and_why() -> None:
    d = Driver(permit_variant(QUICK))
    d.feed(d.topics.clerk_permit("clerk-1"), clerk_body(local(11), local(11, 30)), local(11))
    d.tick(local(12))
    status, change = d.engine.permit_status.state(to_us(local(12)))
    assert status == "revoked"
    assert change is not None
    assert (change.by, change.reason, change.resolution) == (
        "clerk-1",
        "no doctor on site since 14:10",
        "TB-2027-41",
    )


def test_a_clerks_change_effective_on_receipt_applies_at_once() -> None:
    d = Driver(permit_variant(QUICK))
    d.present(3000, local(11))
    d.feed(d.topics.clerk_permit("clerk-1"), clerk_body(local(11, 1), local(11, 1)), local(11, 1))
    assert d.status()["permit"]["status"] == "revoked"
    assert d.holds("dispersing")  # the crowd's hour to leave starts at once
    d.tick(local(11, 1) + timedelta(seconds=1))
    assert d.status()["permit"]["status"] == "revoked"


# -- what changed ---------------------------------------------------------------------------


def test_changes_are_true_when_an_alert_or_a_command_changed() -> None:
    assert not Changes()
    command = wire.GateCommand(admit=False, attendance=4000, hold_at=4000, resume_below=3960,
                               reason="HOLD")  # fmt: skip
    assert Changes(commands={"north": command})
    d = Driver(permit_variant(QUICK))
    d.present(600, local(12))  # no doctor, no nurse: alerts at once
    alerts_only = d.engine.collect_changes()
    assert alerts_only.alerts
    assert Changes(alerts=alerts_only.alerts)
    assert not d.engine.collect_changes()  # nothing since


# -- a counter that restarts twice ----------------------------------------------------------


def test_a_second_restart_within_clear_s_republishes_the_same_alert() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.clear_s": 30}))

    def resets() -> list[wire.Alert]:
        return [a for a in d.engine.collect_changes().alerts if a.rule == "counter-reset"]

    d.gate("north", local(12), 100, 10)
    d.gate("north", local(12, 0, 10), 3, 0, seq=0)  # restarted
    (first,) = resets()
    assert first.observed["restarts"] == 1
    d.gate("north", local(12, 0, 20), 9, 1, seq=1)
    d.gate("north", local(12, 0, 25), 2, 0, seq=0)  # and again, 15 s after the first
    (again,) = resets()
    assert again.id == first.id
    assert again.observed["restarts"] == 2
    assert again.ended_at == local(12, 0, 25)
    d.tick(local(12, 1))
    (cleared,) = resets()
    assert (cleared.id, cleared.state) == (first.id, "cleared")
    assert cleared.cleared_at == local(12, 0, 55)


def test_pending_conditions_are_listed_oldest_first() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.pending_s": 60}))
    d.staff(local(12), doctors=1, nurses=0, security=20)
    d.present(600, local(12, 0, 1))  # no nurse: nurse-ratio pending from 12:00:01
    d.lot("lot-a", local(12, 0, 5), 590)  # lot-a full: pending from 12:00:05
    assert [(p["rule"], p["since"]) for p in d.status()["pending"]] == [
        ("nurse-ratio", "2027-07-04T16:00:01Z"),
        ("lot-full", "2027-07-04T16:00:05Z"),
    ]


def test_the_status_names_every_checklist_item_that_applies_with_its_cite() -> None:
    """The dashboard has no permit: the status tells it what the inspectors check."""
    permit = permit_variant(QUICK)
    items = Engine(permit).status().checklist_items
    assert [i.item for i in items] == [i.item for i in applicable_items(permit)]
    assert items[0] == wire.ChecklistItemInfo(
        item="C(1)(a)",
        paragraph="C(1) Drinking water",
        text="Drinking water readily available to everyone attending",
        cite="permit:C(1)(a)",
    )
    assert all(i.cite == f"permit:{i.item}" or i.cite.startswith("permit:") for i in items)
