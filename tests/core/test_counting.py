"""The counting state: cumulative gate totals, restarts, lots, the roster, liveness."""

from __future__ import annotations

from datetime import UTC, datetime

from core_support import QUICK, Driver, local, permit_variant, when

from kent_ops.core.counting import Counting, GateCounter, LotSensor, StaffRoster
from kent_ops.core.timeutil import SECOND
from kent_ops.core.wire import Badge, GateCount, LotOccupancy

T0 = datetime(2027, 7, 4, 16, 0, tzinfo=UTC)


def gc(seq: int, in_total: int, out_total: int, second: int = 0) -> GateCount:
    return GateCount(seq=seq, ts=T0.replace(second=second), in_total=in_total, out_total=out_total)


def lot(seq: int, occupied: int, second: int = 0) -> LotOccupancy:
    return LotOccupancy(seq=seq, ts=T0.replace(second=second), occupied=occupied)


def scan(seq: int, badge: str, role: str, action: str, second: int = 0) -> Badge:
    return Badge(seq=seq, ts=T0.replace(second=second), badge=badge, role=role, action=action)  # type: ignore[arg-type]


# -- gate counters --------------------------------------------------------------------------


def test_totals_are_cumulative_not_summed() -> None:
    g = GateCounter()
    assert g.apply(gc(1, 10, 2), 0).effect == "counted"
    assert g.apply(gc(2, 15, 4), SECOND).effect == "counted"
    assert (g.in_total, g.out_total, g.net) == (15, 4, 11)


def test_a_repeated_or_older_seq_changes_nothing() -> None:
    g = GateCounter()
    g.apply(gc(5, 10, 2), 0)
    g.apply(gc(6, 20, 3), 0)
    assert g.apply(gc(6, 20, 3), 0).effect == "duplicate"
    assert g.apply(gc(5, 10, 2), 0).effect == "duplicate"
    assert g.apply(gc(4, 99, 0), 0).effect == "duplicate"
    assert (g.in_total, g.out_total, g.last_seq) == (20, 3, 6)


def test_a_gap_in_seq_is_fine() -> None:
    g = GateCounter()
    g.apply(gc(1, 10, 0), 0)
    assert g.apply(gc(9, 40, 5), 0).effect == "counted"
    assert g.net == 35


def test_a_restart_keeps_earlier_totals_and_adds_the_new_ones() -> None:
    g = GateCounter()
    g.apply(gc(1, 100, 10), 0)
    g.apply(gc(2, 150, 20), 0)
    outcome = g.apply(gc(0, 5, 1, second=9), 0)
    assert outcome.effect == "restart"
    assert outcome.reason is not None
    assert "in 150" in outcome.reason
    assert (g.in_total, g.out_total, g.restarts) == (155, 21, 1)
    assert g.apply(gc(1, 12, 2, second=10), 0).effect == "counted"
    assert (g.in_total, g.out_total) == (162, 22)


def test_a_restart_at_seq_1_is_stitched_too() -> None:
    g = GateCounter()
    g.apply(gc(1, 100, 10), 0)
    g.apply(gc(2, 150, 20), 0)
    assert g.apply(gc(1, 3, 0, second=30), 0).effect == "restart"
    assert g.in_total == 153


def test_falling_totals_with_a_rising_seq_are_a_restart_that_kept_its_seq() -> None:
    """Refused for the rest of the day once (every later reading fell short of the totals
    before); stitched now, as any restart."""
    g = GateCounter()
    g.apply(gc(1, 100, 10), 0)
    g.apply(gc(2, 150, 20), 0)
    outcome = g.apply(gc(3, 4, 0), 0)
    assert outcome.effect == "restart"
    assert outcome.reason is not None
    assert outcome.reason.startswith("counter restarted keeping its seq (totals fell at seq 3")
    assert (g.in_total, g.out_total, g.last_seq, g.restarts) == (154, 20, 3, 1)
    assert g.apply(gc(4, 9, 1), 0).effect == "counted"
    assert (g.in_total, g.out_total) == (159, 21)


def test_a_redelivered_first_message_is_a_duplicate_not_a_restart() -> None:
    """QoS 1 may redeliver seq 0 or 1 long after; it must not be stitched on again."""
    g = GateCounter()
    first = gc(1, 0, 0)
    g.apply(first, 0)
    g.apply(gc(2, 10, 1), 0)
    g.apply(gc(3, 30, 2), 0)
    assert g.apply(first, 0).effect == "duplicate"
    assert (g.in_total, g.out_total, g.restarts) == (30, 2, 0)
    assert g.apply(gc(4, 31, 2), 0).effect == "counted"
    assert g.in_total == 31


def test_a_redelivered_first_message_after_a_real_restart_is_a_duplicate() -> None:
    g = GateCounter()
    g.apply(gc(0, 0, 0), 0)
    g.apply(gc(1, 50, 5), 0)
    restart = gc(0, 2, 0, second=40)
    assert g.apply(restart, 0).effect == "restart"
    g.apply(gc(1, 7, 1, second=41), 0)
    g.apply(gc(2, 9, 1, second=42), 0)
    assert g.apply(restart, 0).effect == "duplicate"
    assert g.apply(gc(1, 7, 1, second=41), 0).effect == "duplicate"
    assert (g.in_total, g.out_total, g.restarts) == (59, 6, 1)


def test_redelivered_messages_from_before_a_restart_are_not_counted_again() -> None:
    """After a crash the broker resends a run's old messages; their seq may be above
    the new run's, but their ts is before the restart, so they are duplicates."""
    g = GateCounter()
    for seq, total, second in ((1, 5, 0), (2, 10, 1), (3, 20, 2)):
        assert g.apply(gc(seq, total, 0, second=second), 0).effect == "counted"
    assert g.apply(gc(1, 1, 0, second=3), 0).effect == "restart"
    for seq, total, second in ((2, 10, 1), (3, 20, 2)):
        assert g.apply(gc(seq, total, 0, second=second), 0).effect == "duplicate"
    assert g.apply(gc(2, 2, 0, second=4), 0).effect == "counted"
    assert (g.in_total, g.restarts) == (22, 1)


def test_per_minute_is_the_entry_rate_over_the_last_minute() -> None:
    g = GateCounter()
    g.apply(gc(1, 0, 0), 0)
    g.apply(gc(2, 30, 0), 30 * SECOND)
    assert g.per_minute(30 * SECOND) == 60.0
    assert g.per_minute(200 * SECOND) == 0.0  # nothing heard for over a minute


# -- lots and the roster -------------------------------------------------------------------


def test_a_lot_ignores_older_seq_and_takes_a_restart() -> None:
    s = LotSensor(capacity=100)
    assert s.apply(lot(4, 40))
    assert not s.apply(lot(3, 99))
    assert s.occupied == 40
    assert s.apply(lot(1, 12, second=50))  # device restarted
    assert s.occupied == 12


def test_a_lot_ignores_a_redelivered_first_message() -> None:
    s = LotSensor(capacity=100)
    first = lot(1, 5)
    s.apply(first)
    s.apply(lot(2, 60))
    assert not s.apply(first)
    assert s.occupied == 60


def test_a_second_on_for_the_same_badge_changes_nothing() -> None:
    r = StaffRoster()
    r.apply("first-aid", scan(1, "RN-1", "nurse", "on"))
    r.apply("first-aid", scan(2, "RN-1", "nurse", "on"))
    assert r.counts == {"doctor": 0, "nurse": 1, "security": 0}
    r.apply("first-aid", scan(3, "RN-1", "nurse", "off"))
    r.apply("first-aid", scan(4, "RN-1", "nurse", "off"))
    r.apply("first-aid", scan(5, "RN-9", "nurse", "off"))  # never on: nothing to take off
    assert r.counts["nurse"] == 0


def test_a_badge_on_again_in_another_role_moves_to_it() -> None:
    r = StaffRoster()
    r.apply("first-aid", scan(1, "X-1", "nurse", "on"))
    r.apply("first-aid", scan(2, "X-1", "doctor", "on"))
    assert r.counts == {"doctor": 1, "nurse": 0, "security": 0}


def test_the_roster_ignores_older_scans_per_station() -> None:
    r = StaffRoster()
    r.apply("first-aid", scan(5, "RN-1", "nurse", "on"))
    assert not r.apply("first-aid", scan(4, "RN-2", "nurse", "on"))
    assert r.apply("gate-desk", scan(1, "S-1", "security", "on"))  # its own sequence
    assert r.counts == {"doctor": 0, "nurse": 1, "security": 1}


def test_a_redelivered_first_scan_does_not_put_a_nurse_back_on_duty() -> None:
    r = StaffRoster()
    first = scan(1, "RN-1", "nurse", "on")
    r.apply("first-aid", first)
    r.apply("first-aid", scan(2, "RN-1", "nurse", "off"))
    assert not r.apply("first-aid", first)
    assert r.counts["nurse"] == 0
    # a reader that really restarted is believed
    assert r.apply("first-aid", scan(1, "RN-7", "nurse", "on", second=59))
    assert r.counts["nurse"] == 1


# -- the whole state -----------------------------------------------------------------------


def counting() -> Counting:
    return Counting.for_sensors(
        ["north", "south", "north-manual"], {"north-manual"}, {"lot-a": 10}, ["first-aid"]
    )


def test_attendance_is_the_sum_of_gate_nets_plus_the_offset() -> None:
    c = counting()
    c.apply_gate("north", gc(1, 100, 10), 0)
    c.apply_gate("south", gc(1, 50, 40), 0)
    assert (c.attendance, c.entries, c.exits) == (100, 150, 50)
    assert c.adjust(130) == 30
    assert c.attendance == 130
    c.apply_gate("north", gc(2, 110, 10), 0)
    assert c.attendance == 140
    assert c.peak == 140


def test_the_peak_is_kept_when_attendance_falls() -> None:
    c = counting()
    c.apply_gate("north", gc(1, 300, 0), 0)
    c.apply_gate("north", gc(2, 300, 250), 0)
    assert (c.attendance, c.peak) == (50, 300)


def test_uncertain_only_while_a_gate_counter_is_offline_or_stale() -> None:
    c = counting()
    c.set_available("lot-a", False)
    c.set_available("first-aid", False)
    assert not c.uncertain
    c.set_stale("south")
    assert c.uncertain
    c.heard("south", 5)
    assert not c.uncertain
    c.set_available("north", False)
    assert c.uncertain
    c.heard("north", 6)  # heard, but its availability still says offline
    assert c.uncertain
    c.set_available("north", True)
    assert not c.uncertain


def test_badge_readers_and_manual_tallies_are_never_watched_for_silence() -> None:
    c = counting()
    assert c.sensors["north"].watched_for_silence
    assert c.sensors["lot-a"].watched_for_silence
    assert not c.sensors["first-aid"].watched_for_silence
    assert not c.sensors["north-manual"].watched_for_silence
    c.heard("north-manual", 1)
    assert not c.sensors["north-manual"].watched_for_silence  # it publishes on taps only


def test_an_unused_tally_going_offline_is_no_gate_down() -> None:
    c = counting()
    c.set_available("north-manual", True)
    c.set_available("north-manual", False)
    assert "north-manual" not in c.offline
    assert not c.uncertain


def test_a_tally_that_counted_going_offline_is_a_note_never_uncertain() -> None:
    c = counting()
    c.set_available("north-manual", True)
    c.apply_gate("north-manual", GateCount(seq=1, ts=T0, in_total=3, out_total=0), 1)
    c.set_available("north-manual", False)
    assert "north-manual" in c.offline  # sensor-offline: a data note
    assert not c.uncertain
    c.set_available("north", False)
    assert c.uncertain  # the automatic counter it stands in for


# -- counter-reset through the engine -----------------------------------------------------


def test_a_restart_through_the_engine_keeps_totals_and_raises_counter_reset() -> None:
    d = Driver(permit_variant({**QUICK, "alerting.pending_s": 10, "alerting.clear_s": 30}))
    d.staff(local(12), doctors=1, nurses=1, security=20)
    d.gate("north", local(12), 100, 10)
    d.gate("north", local(12, 1), 150, 20)
    result = d.gate("north", local(12, 2), 5, 1, seq=0)
    assert result.accepted
    assert result.reason is not None
    assert "restarted" in result.reason
    status = d.status()
    assert status["gates"]["north"]["in"] == 155
    assert status["gates"]["north"]["out"] == 21
    assert status["gates"]["north"]["restarts"] == 1
    assert status["attendance"]["current"] == 134
    (alert,) = d.alerts("counter-reset")
    assert alert["subject"] == "north"
    assert alert["severity"] == "data"
    assert when(alert["since"]) == local(12, 2)
    assert when(alert["raised_at"]) == local(12, 2)  # at once, not after pending_s
    assert alert["state"] == "active"
    assert alert["id"] in status["active_alerts"]
    d.tick(local(12, 2, 29))
    assert d.alerts("counter-reset")[0]["state"] == "active"
    d.tick(local(12, 3))
    (alert,) = d.alerts("counter-reset")
    assert alert["state"] == "cleared"
    assert when(alert["cleared_at"]) == local(12, 2, 30)
    assert alert["id"] not in d.status()["active_alerts"]
    d.gate("north", local(12, 4), 9, 1, seq=1)
    assert d.status()["gates"]["north"]["in"] == 159


# -- the entry rate and the split by property ---------------------------------------------


def test_the_rate_is_taken_from_the_newest_entry_a_minute_back() -> None:
    g = GateCounter()
    for seq, (at, total) in enumerate(((10, 10), (20, 50), (100, 60)), start=1):
        g.apply(gc(seq, total, 0), at * SECOND)
    # At 100 s the window starts at 40 s: 20 s is the newest entry before it, kept as the
    # base so the rate spans the whole minute; 10 s is dropped.
    assert [t // SECOND for t, _ in g.recent] == [20, 100]
    assert g.per_minute(100 * SECOND) == (60 - 50) * 60 / 80


def test_the_rate_counts_only_persons_in_since_the_window_began() -> None:
    g = GateCounter()
    g.apply(gc(1, 100, 0), 0)
    g.apply(gc(2, 130, 0), 30 * SECOND)
    assert g.per_minute(30 * SECOND) == 60.0  # 30 in 30 s, not 230


def test_no_rate_from_messages_less_than_a_second_apart() -> None:
    g = GateCounter()
    g.apply(gc(1, 0, 0), 0)
    g.apply(gc(2, 5, 0), SECOND // 2)
    assert g.per_minute(SECOND // 2) == 0.0


def test_persons_by_property_follow_boundary_and_internal_gates() -> None:
    c = Counting.for_sensors(
        ["north", "link", "path"], set(), {}, [],
        gate_property={"north": "main"},
        internal={"link": ("main", "field"), "path": ("woods", "main")},
    )  # fmt: skip
    c.apply_gate("north", gc(1, 100, 0), 0)
    c.apply_gate("link", gc(1, 40, 10), 0)  # 30 moved from main to the field
    c.apply_gate("path", gc(1, 5, 0), 0)  # 5 came out of the woods into main
    assert c.by_property() == {"main": 75, "field": 30, "woods": -5}
    assert c.attendance == 100  # internal gates move persons, the aggregate stays


def test_a_redelivered_first_message_says_why_it_is_a_duplicate() -> None:
    g = GateCounter()
    first = gc(1, 0, 0)
    g.apply(first, 0)
    g.apply(gc(2, 10, 1), 0)
    assert g.apply(first, 0)[:2] == ("duplicate", "seq 1 already counted (redelivered)")
