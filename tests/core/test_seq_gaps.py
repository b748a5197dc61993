"""Nothing acknowledged is lost unsaid, at each edge: gaps, implausible jumps, stuck
sensors, restarts told by totals, a broker restart, and the figures they put in doubt.

Each sensor numbers its messages (docs/protocol.md, "Counting"); these tests feed the
engine what a broker killed between its saves, a device rebooting, or a corrupt
counter would deliver, and read the status, the alerts and their stretches.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from core_support import QUICK, Driver, local, permit_variant, utc

from kent_ops.core import snapshot as snapshots
from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.seq import IMPLAUSIBLE_FROM, SeqTrack, fingerprint
from kent_ops.core.timeutil import SECOND

QUICK_STALE = {**QUICK, "alerting.stale_after_s": 60}
"""Alerts at once, and a sensor silent (or counting nothing) for 60 s is in doubt."""


def driver(changes: dict[str, Any] | None = None, clock: str = "sensor") -> Driver:
    return Driver(permit_variant(changes or QUICK), clock=clock)


def roster(d: Driver, t: datetime, seq: int, *on_duty: tuple[str, str]) -> wire.FeedResult:
    """The first-aid reader re-states who is on duty there (sharing its ``seq``)."""
    d.seq["first-aid"] = seq
    body = wire.Roster(seq, t, tuple(wire.OnDuty(b, r) for b, r in on_duty))  # type: ignore[arg-type]
    return d.feed(d.topics.staff_roster("first-aid"), wire.encode_reading(body), t)


def stretches(alert: dict[str, Any]) -> list[tuple[str, str | None, str, list[str]]]:
    return [(s["start"], s["end"], s["basis"], s["rests_on"]) for s in alert["stretches"]]


def nurses_on(d: Driver, t: datetime, n: int, first_seq: int = 1) -> None:
    for i in range(n):
        d.badge(t, f"RN-{i + 1}", "nurse", "on", seq=first_seq + i)


# -- gaps -------------------------------------------------------------------------------------


def test_a_gap_in_a_gates_seq_is_named_and_its_next_reading_measures_it_again() -> None:
    d = driver()
    d.gate("north", local(12), 100, 0, seq=1)
    result = d.gate("north", local(12, 1), 130, 5, seq=5)
    assert result.accepted
    assert result.reason is None
    (gap,) = d.alerts("sensor-gap", "north")
    assert gap["message"] == "gate counter north: seq 2–4 never received"
    assert gap["observed"] == {
        "device": "gate counter", "first": 2, "last": 4, "missing": 3, "roster": False,
    }  # fmt: skip
    assert gap["since"] == gap["ended_at"] == utc(local(12, 1))  # an event: raised at once
    status = d.status()
    assert status["attendance"]["current"] == 125  # the totals are cumulative: measured
    assert status["attendance"]["uncertain"] is False
    sensor = status["sensors"]["north"]
    assert (sensor["gaps"], sensor["missing"], sensor["last_gap"]) == (1, 3, "seq 2–4")


def test_one_number_missing_is_named_alone() -> None:
    d = driver()
    d.lot("lot-a", local(12), 10, seq=7)
    d.lot("lot-a", local(12, 1), 12, seq=9)
    assert d.alerts("sensor-gap", "lot-a")[0]["message"] == "lot sensor lot-a: seq 8 never received"


def test_a_qos1_redelivery_and_a_normal_restart_are_no_gap() -> None:
    d = driver()
    for seq in (1, 2, 3):
        d.gate("north", local(12, seq), 10 * seq, 0, seq=seq)
    d.gate("north", local(12, 2), 20, 0, seq=2)  # redelivered: older
    d.gate("north", local(12, 3), 30, 0, seq=3)  # redelivered: the last again
    d.gate("north", local(12, 9), 4, 0, seq=1)  # rebooted: seq 1, lower totals
    d.gate("north", local(12, 10), 6, 0, seq=2)
    d.lot("lot-a", local(12, 1), 10, seq=0)
    d.lot("lot-a", local(12, 2), 11, seq=1)
    d.lot("lot-a", local(12, 3), 4, seq=0)  # a lot sensor restarting at 0
    d.badge(local(12, 1), "RN-1", "nurse", "on", seq=1)
    d.badge(local(12, 1), "RN-1", "nurse", "on", seq=1)  # redelivered
    assert d.alerts("sensor-gap") == []
    assert d.status()["gates"]["north"]["in"] == 36


def test_a_badge_readers_gap_leaves_the_roster_unknown_until_it_is_re_stated() -> None:
    d = driver()
    d.present(1100, local(12))
    d.badge(local(12), "MD-1", "doctor", "on", seq=1)
    nurses_on(d, local(12), 3, first_seq=2)  # seq 2 to 4: 3 nurses, 1,100 persons need 3
    d.badge(local(12, 1), "RN-3", "nurse", "off", seq=5)
    d.badge(local(12, 1), "RN-2", "nurse", "off", seq=6)  # 1 nurse now: a breach
    breach = d.alerts("nurse-ratio")[0]
    assert breach["uncertain"] is False
    lost_at = local(12, 5)
    d.badge(lost_at, "RN-2", "nurse", "on", seq=41)  # seq 7–40 never received
    (gap,) = d.alerts("sensor-gap", "first-aid")
    assert gap["message"] == (
        "badge reader first-aid: seq 7–40 never received; its roster is unknown until it is "
        "re-stated"
    )
    status = d.status()
    assert status["medical"]["uncertain"] is True
    assert status["sensors"]["first-aid"]["doubt"] == "roster unknown since a gap (seq 7–40)"
    assert status["attendance"]["uncertain"] is False
    assert d.engine.counts.doubts("staff") == (
        "staff station first-aid roster unknown since a gap (seq 7–40)",
    )
    # The breach (2 nurses by the scans received) rests on the gap from the instant it
    # was found, whatever the scans after it say:
    d.badge(local(12, 6), "RN-2", "nurse", "off", seq=42)
    breach = d.alerts("nurse-ratio")[-1]
    assert breach["uncertain"] is True
    assert stretches(breach)[-1] == (
        utc(lost_at),
        None,
        "indeterminate",
        ["staff station first-aid roster unknown since a gap (seq 7–40)"],
    )
    # The reader re-states who is on duty there: known again from that instant.
    known_at = local(12, 9)
    roster(d, known_at, 43, ("MD-1", "doctor"), ("RN-1", "nurse"))
    status = d.status()
    assert status["medical"]["uncertain"] is False
    assert status["sensors"]["first-aid"]["doubt"] is None
    breach = d.alerts("nurse-ratio")[-1]
    assert stretches(breach)[-2:] == [
        (utc(lost_at), utc(known_at), "indeterminate",
         ["staff station first-aid roster unknown since a gap (seq 7–40)"]),
        (utc(known_at), None, "measured", []),
    ]  # fmt: skip


def test_a_roster_after_a_gap_knows_the_roster_at_once() -> None:
    d = driver()
    d.badge(local(12), "RN-1", "nurse", "on", seq=1)
    result = roster(d, local(12, 1), 9, ("RN-1", "nurse"), ("RN-2", "nurse"), ("MD-1", "doctor"))
    assert result.accepted
    (gap,) = d.alerts("sensor-gap", "first-aid")
    assert gap["message"] == "badge reader first-aid: seq 2–8 never received"
    status = d.status()
    assert status["medical"]["uncertain"] is False
    assert (status["medical"]["nurses_on_duty"], status["medical"]["doctors_on_duty"]) == (2, 1)


def test_a_roster_takes_off_whoever_went_on_there_and_is_not_named() -> None:
    d = driver()
    d.badge(local(12), "RN-1", "nurse", "on", seq=1)
    d.badge(local(12), "RN-2", "nurse", "on", seq=2)
    d.badge(local(12), "S-1", "security", "on", seq=3)
    roster(d, local(12, 1), 4, ("RN-2", "doctor"), ("S-1", "security"))
    status = d.status()
    assert status["medical"]["nurses_on_duty"] == 0
    assert status["medical"]["doctors_on_duty"] == 1
    assert status["security"]["on_duty"] == 1
    # A roster redelivered changes nothing; an empty one takes everyone there off.
    assert roster(d, local(12, 1), 4, ("RN-2", "doctor"), ("S-1", "security")).reason
    roster(d, local(12, 2), 5)
    assert d.engine.counts.roster.counts == {"doctor": 0, "nurse": 0, "security": 0}


def test_a_roster_unknown_since_a_gap_is_known_again_when_the_day_ends() -> None:
    """The day is the permitted window: its end is a rule pass, and the doubt ends there."""
    d = driver()
    d.badge(local(23), "RN-1", "nurse", "on", seq=1)
    d.badge(local(23, 1), "RN-2", "nurse", "on", seq=5)
    assert d.status()["medical"]["uncertain"] is True
    window_end = local(23, 30)
    d.tick(window_end - timedelta(microseconds=1))
    assert d.status()["medical"]["uncertain"] is True
    d.tick(window_end)
    assert d.status()["medical"]["uncertain"] is False
    (span,) = d.engine.doubt.spans
    assert (span.figure, span.end) == ("staff", int(window_end.timestamp()) * SECOND)


# -- implausible jumps --------------------------------------------------------------------------


def test_the_reading_with_seq_2_31_plus_11_is_refused_and_the_gate_counts_on() -> None:
    """Once it froze the gate for the day: every later reading was "already counted"."""
    d = driver({**QUICK_STALE})
    t0 = local(12)
    for seq in range(1, 31):
        d.gate("north", t0 + timedelta(seconds=2 * seq), 10 * seq, 0, seq=seq)
        d.gate("south", t0 + timedelta(seconds=2 * seq), 0, 0)
    bogus = d.gate("north", t0 + timedelta(seconds=61), 9999, 0, seq=2**31 + 11)
    assert not bogus.accepted
    assert bogus.reason == (
        "seq 2,147,483,659 is implausible: 2,147,483,629 ahead of seq 30 in 1 s (a device "
        "sends at most 10 a second); its last seq stays 30"
    )
    assert d.status()["gates"]["north"]["in"] == 300
    for seq in range(31, 41):
        t = t0 + timedelta(seconds=2 * seq)
        assert d.gate("north", t, 10 * seq, 0, seq=seq).reason is None
    status = d.status()
    assert status["gates"]["north"]["in"] == 400
    assert status["rejected"] == 1
    assert d.alerts("sensor-gap") == []
    assert d.alerts("sensor-stuck") == []
    assert d.engine.counts.doubts("attendance") == ()


def implausible(jump: int, seconds: float) -> bool:
    track = SeqTrack()
    track.take((10, 0), 0)
    return track.judge((10 + jump, 1), round(seconds * SECOND)).kind == "implausible"


def test_the_edge_of_an_implausible_jump() -> None:
    """More than 10 a second of the time since the last message, and at least 1,000."""
    assert IMPLAUSIBLE_FROM == 1000
    assert not implausible(999, 0)  # a gap of 998, never implausible
    assert implausible(1000, 0)
    assert implausible(1000, 99.9)
    assert not implausible(1000, 100)  # exactly 10 a second
    assert implausible(1001, 100)
    assert not implausible(50_000, 5000)
    assert implausible(50_001, 5000)


def test_an_implausible_jump_does_not_become_the_last_seq() -> None:
    d = driver()
    d.lot("lot-a", local(12), 10, seq=5)
    assert not d.lot("lot-a", local(12, 0, 1), 99, seq=5000).accepted
    assert d.lot("lot-a", local(12, 0, 2), 12, seq=6).reason is None  # not "already seen"
    assert d.status()["lots"]["lot-a"]["occupied"] == 12
    assert not d.badge(local(12), "RN-1", "nurse", "on", seq=1).reason
    assert not d.badge(local(12, 0, 1), "RN-2", "nurse", "on", seq=10**6).accepted
    assert d.badge(local(12, 0, 2), "RN-3", "nurse", "on", seq=2).reason is None
    assert d.alerts("sensor-gap") == []


# -- stuck ----------------------------------------------------------------------------------


def test_a_gate_whose_messages_arrive_but_count_nothing_is_stuck_at_stale_after_s() -> None:
    d = driver(QUICK_STALE)
    d.gate("south", local(12), 10, 0, seq=1)
    last = local(12)
    d.gate("north", last, 100, 0, seq=50)
    t = last
    for _ in range(12):  # every 5 s an older seq: each taken for a repeat
        t += timedelta(seconds=5)
        assert d.gate("north", t, 101, 0, seq=20).reason == "seq 20 already counted (last 50)"
        d.gate("south", t, 10, 0)  # south idle: the same totals with the next seq
    assert t == last + timedelta(seconds=60)
    status = d.status()
    assert status["sensors"]["north"]["stuck"] is True
    assert status["sensors"]["north"]["online"] is True  # heard: not silent
    assert status["sensors"]["south"]["stuck"] is False
    assert status["attendance"]["uncertain"] is True
    assert d.engine.counts.doubts("attendance") == ("gate north stuck",)
    (stuck,) = d.alerts("sensor-stuck")
    assert (stuck["subject"], stuck["since"]) == ("north", utc(last + timedelta(seconds=60)))
    assert d.alerts("sensor-offline", "north") == []
    # Counting again ends it at that instant.
    back = t + timedelta(seconds=1)
    d.gate("north", back, 102, 0, seq=51)
    assert d.status()["sensors"]["north"]["stuck"] is False
    assert d.alerts("sensor-stuck")[0]["ended_at"] == utc(back)


def test_a_gate_refusing_everything_is_stuck_not_silent() -> None:
    d = driver(QUICK_STALE)
    d.gate("north", local(12), 100, 0, seq=1)
    t = local(12)
    for i in range(1, 14):
        t = local(12) + timedelta(seconds=5 * i)
        assert not d.gate("north", t, 100, 0, seq=10**7 + i).accepted  # implausible
    assert d.status()["sensors"]["north"]["stuck"] is True
    assert d.alerts("sensor-offline", "north") == []
    assert "gate north stuck" in d.engine.counts.doubts("attendance")


def test_the_stuck_edge_is_stale_after_s_exactly() -> None:
    d = driver(QUICK_STALE)
    d.gate("north", local(12), 100, 0, seq=9)
    d.gate("north", local(12, 0, 59), 100, 0, seq=3)
    d.tick(
        local(
            12,
            0,
            59,
        )
        + timedelta(microseconds=999_999)
    )
    assert d.status()["sensors"]["north"]["stuck"] is False
    d.tick(local(12, 1))
    assert d.status()["sensors"]["north"]["stuck"] is True


def test_an_idle_gate_sending_the_same_totals_with_the_next_seq_is_never_stuck() -> None:
    d = driver(QUICK_STALE)
    for i in range(40):
        d.gate("north", local(12) + timedelta(seconds=30 * i), 100, 20)
        d.gate("south", local(12) + timedelta(seconds=30 * i), 0, 0)
    assert d.alerts("sensor-stuck") == []
    assert d.status()["attendance"]["uncertain"] is False


# -- restarts told by totals ------------------------------------------------------------------


def test_a_counter_that_restarts_keeping_its_seq_but_losing_its_totals_is_stitched() -> None:
    d = driver()
    d.gate("north", local(12), 300, 40, seq=10)
    result = d.gate("north", local(12, 1), 5, 0, seq=11)
    assert result.accepted
    assert result.reason == (
        "counter restarted keeping its seq (totals fell at seq 11: in 300→5, out 40→0); "
        "totals before it kept (in 300, out 40)"
    )
    for seq, in_total in ((12, 9), (13, 25)):
        assert d.gate("north", local(12, seq - 10), in_total, 1, seq=seq).reason is None
    gate = d.status()["gates"]["north"]
    assert (gate["in"], gate["out"], gate["restarts"]) == (325, 41, 1)
    assert [a["subject"] for a in d.alerts("counter-reset")] == ["north"]


def test_a_tally_whose_first_message_after_a_reboot_was_lost_is_stitched_and_named() -> None:
    """Once frozen: seq 2 of the new run was "already counted" until it passed seq 30."""
    d = driver()
    for seq in range(1, 31):
        d.gate("north-manual", local(12, 0, seq), seq, 0, seq=seq)
    # The tally rebooted; its seq 1 (one tap) never arrived; seq 2 carries two taps.
    result = d.gate("north-manual", local(12, 5), 2, 0, seq=2)
    assert result.accepted
    assert result.reason is not None
    assert result.reason.startswith("counter restarted at seq 2")
    for seq in range(3, 6):
        assert d.gate("north-manual", local(12, 5, seq), seq, 0, seq=seq).reason is None
    assert d.status()["gates"]["north-manual"]["in"] == 35
    (gap,) = d.alerts("sensor-gap", "north-manual")
    assert gap["message"] == "manual tally north-manual: seq 1 never received"


def test_a_device_with_a_1970_clock_rebooting_twice_loses_no_one_on_the_wall_clock() -> None:
    """Once 50 persons were lost: the second reboot's messages, stamped before the first
    reboot's on the device's clock, were taken for redeliveries of the earlier run."""
    d = driver(QUICK, clock="wall")
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    received = local(12)

    def run(counts: list[int]) -> None:
        nonlocal received
        for seq, in_total in enumerate(counts, start=1):
            received += timedelta(seconds=7)
            ts = epoch + timedelta(seconds=seq)  # the clock starts again at each boot
            assert d.gate("north", ts, in_total, 0, seq=seq, received=received).accepted

    run([0, 10, 20, 30])
    run([0, 4, 12, 20])
    run([0, 7, 25, 50])
    gate = d.status()["gates"]["north"]
    assert (gate["in"], gate["restarts"]) == (100, 2)
    # Each run's messages redelivered after the last reboot are recognised as repeats.
    for seq, in_total in ((3, 20), (4, 30)):
        late = d.gate("north", epoch + timedelta(seconds=seq), in_total, 0, seq=seq,
                      received=received + timedelta(seconds=1))  # fmt: skip
        assert late.accepted
        assert late.reason is not None
    assert d.status()["gates"]["north"]["in"] == 100


def test_an_earlier_runs_redelivered_tail_is_a_repeat_whatever_its_seq() -> None:
    d = driver(QUICK, clock="wall")
    at = local(12)
    old = [(seq, 10 * seq) for seq in range(1, 9)]
    for seq, total in old:
        d.gate("north", local(11, 0, seq), total, 0, seq=seq, received=at)
    d.gate("north", local(11, 1), 3, 0, seq=1, received=at)  # restarted
    for seq, total in old[-4:]:  # the old run's last messages, redelivered
        result = d.gate("north", local(11, 0, seq), total, 0, seq=seq, received=at)
        assert result.reason is not None
        assert "earlier run" in result.reason
    assert d.status()["gates"]["north"]["in"] == 83
    assert d.alerts("sensor-gap") == []


def test_an_older_seq_whose_totals_rose_is_no_restart() -> None:
    d = driver()
    d.gate("north", local(12), 50, 5, seq=5)
    d.gate("north", local(12, 1), 60, 5, seq=6)
    assert d.gate("north", local(12, 2), 99, 0, seq=4).reason == "seq 4 already counted (last 6)"
    assert d.status()["gates"]["north"]["restarts"] == 0


def test_a_message_is_known_by_its_content_not_its_ts() -> None:
    a = wire.GateCount(3, datetime(2027, 7, 4, tzinfo=UTC), 10, 1)
    b = msgspec.structs.replace(a, in_total=11)
    assert fingerprint(a) == fingerprint(msgspec.structs.replace(a))
    assert fingerprint(a) != fingerprint(b)
    assert fingerprint(a)[0] == 3


# -- the broker restarted ---------------------------------------------------------------------


def test_a_broker_restart_puts_every_sensor_in_doubt_until_it_is_heard_again() -> None:
    d = driver()
    d.present(1100, local(12))
    d.gate("south", local(12), 0, 0)
    d.lot("lot-a", local(12), 10)
    d.badge(local(12), "MD-1", "doctor", "on")
    d.badge(local(12), "RN-1", "nurse", "on")  # 1 nurse, 1,100 persons need 3
    breach = d.alerts("nurse-ratio")[0]
    at = local(12, 1)
    d.tick(at)
    d.engine.broker_restarted("its uptime fell from 3,600 s to 4 s")
    (restarted,) = d.alerts("broker-restarted")
    assert restarted["since"] == utc(at)
    assert restarted["ended_at"] is None
    assert restarted["message"] == (
        "the event's broker restarted (its uptime fell from 3,600 s to 4 s): messages it "
        "acknowledged since its last save may be lost; each sensor's figures are "
        "indeterminate until it is heard again"
    )
    status = d.status()
    assert status["attendance"]["uncertain"] is True
    assert status["medical"]["uncertain"] is True
    assert status["sensors"]["north"]["doubt"] == "not heard since the broker restarted"
    assert status["sensors"]["north-manual"]["doubt"] is None  # nobody used it
    assert d.engine.counts.doubts("attendance") == (
        "gate north not heard since the broker restarted",
        "gate south not heard since the broker restarted",
    )
    breach = d.alerts("nurse-ratio")[0]
    assert stretches(breach)[-1][:3] == (utc(at), None, "indeterminate")
    # Each is heard again: its doubt ends at that instant.
    d.gate("north", local(12, 1, 5), 1100, 0)
    d.gate("south", local(12, 1, 6), 0, 0)
    d.lot("lot-a", local(12, 1, 7), 10)
    d.lot("lot-b", local(12, 1, 7), 0)  # never heard before: in doubt all the same
    assert d.status()["attendance"]["uncertain"] is False
    assert d.status()["medical"]["uncertain"] is True
    heard = local(12, 1, 8)
    d.badge(heard, "RN-1", "nurse", "on")
    status = d.status()
    assert status["medical"]["uncertain"] is False
    assert stretches(d.alerts("nurse-ratio")[0])[-1] == (utc(heard), None, "measured", [])
    assert d.alerts("broker-restarted")[0]["ended_at"] == utc(heard)
    assert d.alerts("broker-restarted")[0]["message"] == (
        "every sensor has been heard again since the broker restarted"
    )


def test_a_sensor_heard_again_with_a_gap_after_a_broker_restart_says_both() -> None:
    d = driver()
    d.badge(local(12), "RN-1", "nurse", "on", seq=6)
    d.tick(local(12, 1))
    d.engine.broker_restarted("its uptime fell from 600 s to 2 s")
    d.badge(local(12, 2), "RN-2", "nurse", "on", seq=41)
    assert d.alerts("sensor-gap")[0]["message"].startswith("badge reader first-aid: seq 7–40")
    assert d.status()["sensors"]["first-aid"]["doubt"] == "roster unknown since a gap (seq 7–40)"
    roster(d, local(12, 3), 42, ("RN-1", "nurse"), ("RN-2", "nurse"))
    assert d.status()["medical"]["uncertain"] is False


# -- live == replay, and the snapshot -----------------------------------------------------------


def history(d: Driver) -> None:
    d.present(700, local(12))
    d.badge(local(12), "MD-1", "doctor", "on", seq=1)
    d.badge(local(12), "RN-1", "nurse", "on", seq=2)
    d.badge(local(12, 1), "RN-2", "nurse", "on", seq=9)
    d.gate("south", local(12, 2), 5, 0, seq=1)
    d.gate("south", local(12, 2, 30), 3, 0, seq=2)
    d.gate("north", local(12, 3), 700, 0, seq=2**31)
    d.engine.broker_restarted("its session came back from a broker younger than it")
    d.gate("north", local(12, 4), 705, 0)


def test_a_snapshot_taken_mid_loss_restores_to_the_same_engine() -> None:
    d = driver(QUICK_STALE)
    history(d)
    saved = d.engine.snapshot()
    again = Engine.restore(d.engine.permit, saved, "sensor")
    assert snapshots.differences(again, saved) == []
    assert msgspec.to_builtins(again.status()) == msgspec.to_builtins(d.engine.status())
    restored = again.counts
    assert restored.sensors["first-aid"].gap == (3, 8)
    assert restored.sensors["lot-a"].unheard is True
    assert [g.sensor for g in again.gaps] == ["first-aid"]
