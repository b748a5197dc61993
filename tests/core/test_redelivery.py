"""Redeliveries through the engine: a lot's or a badge reader's repeated or older ``seq``
changes no figure of the status, while a reader or sensor that really restarted (``seq``
back at 0 or 1 with another message, or at a number its run used for another message: a
device never sends one number twice with other figures) is believed.

QoS 1 delivers at least once: the broker resends what it has no PUBACK for, in any later
session, so the engine sees the same message twice, or an old one after a newer one.
"""

from __future__ import annotations

from typing import Any

from core_support import QUICK, Driver, local, permit_variant


def figures(d: Driver) -> dict[str, Any]:
    """The figures a redelivery must not move."""
    status = d.status()
    return {
        "occupied": status["parking"]["occupied"],
        "lots": {lot: v["occupied"] for lot, v in status["lots"].items()},
        "medical": status["medical"],
        "security": status["security"]["on_duty"],
    }


def driver() -> Driver:
    return Driver(permit_variant(QUICK))


# -- lots ---------------------------------------------------------------------------------


def test_a_lots_repeated_or_older_seq_through_the_engine_changes_no_figure() -> None:
    d = driver()
    for seq, (minute, occupied) in enumerate(((1, 100), (2, 200), (3, 300)), start=1):
        assert d.lot("lot-a", local(12, minute), occupied, seq=seq).reason is None
    assert d.lot("lot-b", local(12, 3), 50, seq=1).reason is None
    before = figures(d)
    assert before["occupied"] == 350
    assert before["lots"]["lot-a"] == 300
    redeliveries = [
        (3, 3, 300),  # the last message again
        (2, 2, 200),  # an older one
        (1, 1, 100),  # this run's first message, long after
    ]
    for seq, minute, occupied in redeliveries:
        result = d.lot("lot-a", local(12, minute), occupied, seq=seq)
        assert result.accepted  # logged and taken, as a repeat
        assert result.reason == f"seq {seq} already counted (last 3)"
        assert figures(d) == before


def test_a_lot_sensor_that_restarted_is_believed_through_the_engine() -> None:
    d = driver()
    d.lot("lot-a", local(12, 1), 100, seq=1)
    d.lot("lot-a", local(12, 2), 400, seq=2)
    d.lot("lot-a", local(12, 3), 500, seq=3)
    restart = d.lot("lot-a", local(12, 10), 420, seq=1)  # rebooted: seq 1, another reading
    assert restart.reason is None
    assert figures(d)["occupied"] == figures(d)["lots"]["lot-a"] == 420
    assert d.lot("lot-a", local(12, 11), 430, seq=2).reason is None
    assert figures(d)["occupied"] == 430
    # The new run's first message redelivered is a repeat, not a second restart.
    again = d.lot("lot-a", local(12, 10), 420, seq=1)
    assert again.reason == "seq 1 already counted (last 2)"
    assert figures(d)["occupied"] == 430


def test_a_lot_sensor_restarting_at_seq_0_is_believed_through_the_engine() -> None:
    d = driver()
    d.lot("lot-b", local(12, 1), 50, seq=0)
    d.lot("lot-b", local(12, 2), 90, seq=1)
    d.lot("lot-b", local(12, 3), 120, seq=2)
    assert d.lot("lot-b", local(12, 9), 7, seq=0).reason is None
    assert figures(d)["lots"]["lot-b"] == 7


# -- badges -------------------------------------------------------------------------------


def test_a_badge_readers_repeated_or_older_seq_through_the_engine_changes_no_figure() -> None:
    d = driver()
    scans = [
        (1, "DR-1", "doctor", "on"),
        (2, "RN-1", "nurse", "on"),
        (3, "RN-2", "nurse", "on"),
        (4, "S-1", "security", "on"),
        (5, "RN-1", "nurse", "off"),
        (6, "S-1", "security", "off"),
        (7, "S-2", "security", "on"),
    ]
    for seq, badge, role, action in scans:
        assert d.badge(local(12, seq), badge, role, action, seq=seq).reason is None
    before = figures(d)
    assert before["medical"]["doctors_on_duty"] == 1
    assert before["medical"]["nurses_on_duty"] == 1
    assert before["security"] == 1
    # Every scan again, newest first and then oldest first: each is a repeat now.
    for seq, badge, role, action in [*reversed(scans), *scans]:
        result = d.badge(local(12, seq), badge, role, action, seq=seq)
        assert result.accepted
        assert result.reason == f"seq {seq} already counted (last 7)"
        assert figures(d) == before
    # An older number no remembered message of this run used (the run went on past a
    # gap) is an older message: not believed.
    d.badge(local(12, 31), "RN-3", "nurse", "on", seq=40)
    stale = d.badge(local(12, 32), "RN-9", "nurse", "on", seq=20)
    assert stale.reason == "seq 20 already counted (last 40)"
    assert figures(d)["medical"]["nurses_on_duty"] == 2


def test_a_number_the_run_used_with_other_figures_is_a_new_run_whose_first_were_lost() -> None:
    """Was "an older seq that says something new is still older": but a device never
    sends one number twice with other figures, so the reader restarted, and the scans
    before it in the new run never arrived: a gap, the roster unknown."""
    d = driver()
    for seq, badge in enumerate(("RN-1", "RN-2", "RN-3", "RN-4", "RN-5", "RN-6"), start=1):
        d.badge(local(12, seq), badge, "nurse", "on", seq=seq)
    assert figures(d)["medical"]["nurses_on_duty"] == 6
    again = d.badge(local(12, 30), "RN-9", "nurse", "on", seq=6)
    assert again.accepted
    assert again.reason is None
    status = d.status()
    assert status["medical"]["nurses_on_duty"] == 7
    assert status["medical"]["uncertain"] is True
    (gap,) = d.alerts("sensor-gap", "first-aid")
    assert gap["message"] == (
        "badge reader first-aid: seq 1–5 never received; its roster is unknown until it "
        "is re-stated"
    )
    # The same with a lot: its reading is taken as a restarted sensor's.
    d.lot("lot-a", local(12, 1), 100, seq=1)
    d.lot("lot-a", local(12, 2), 200, seq=2)
    assert d.lot("lot-a", local(12, 40), 10, seq=2).reason is None
    assert figures(d)["lots"]["lot-a"] == 10


def test_a_badge_reader_that_restarted_is_believed_through_the_engine() -> None:
    d = driver()
    d.badge(local(12, 1), "RN-1", "nurse", "on", seq=1)
    d.badge(local(12, 2), "RN-2", "nurse", "on", seq=2)
    d.badge(local(12, 3), "S-1", "security", "on", seq=3)
    assert figures(d)["medical"]["nurses_on_duty"] == 2
    # The reader rebooted: seq 1 again, a scan it never sent before.
    assert d.badge(local(12, 20), "RN-2", "nurse", "off", seq=1).reason is None
    assert figures(d)["medical"]["nurses_on_duty"] == 1
    assert d.badge(local(12, 21), "S-2", "security", "on", seq=2).reason is None
    assert figures(d)["security"] == 2
    # Its first scan after the reboot, redelivered, is a repeat: RN-2 stays off.
    d.badge(local(12, 22), "RN-2", "nurse", "on", seq=3)
    d.badge(local(12, 23), "RN-2", "nurse", "off", seq=4)
    again = d.badge(local(12, 20), "RN-2", "nurse", "off", seq=1)
    assert again.reason == "seq 1 already counted (last 4)"
    assert figures(d)["medical"]["nurses_on_duty"] == 1


def test_a_badge_reader_restarting_at_seq_0_is_believed_through_the_engine() -> None:
    d = driver()
    d.badge(local(12, 1), "RN-1", "nurse", "on", seq=0)
    d.badge(local(12, 2), "RN-2", "nurse", "on", seq=1)
    d.badge(local(12, 3), "RN-3", "nurse", "on", seq=2)
    assert d.badge(local(12, 9), "RN-3", "nurse", "off", seq=0).reason is None
    assert figures(d)["medical"]["nurses_on_duty"] == 2
    # The first run's seq 0, redelivered after the restart, is from another run.
    again = d.badge(local(12, 1), "RN-1", "nurse", "on", seq=0)
    assert again.reason == "seq 0 already counted (last 0)"
    assert figures(d)["medical"]["nurses_on_duty"] == 2


def test_seq_0_after_seq_1_is_a_repeat_with_its_own_figures_and_a_restart_with_others() -> None:
    """Was "a restart is recognised only once the run has gone past seq 1": seq 0 after
    seq 1 that repeats the run's own seq 0 changes nothing; one with other figures is
    another run of the device (it never sends a number twice with other figures)."""
    d = driver()
    d.lot("lot-a", local(12, 1), 10, seq=0)
    d.lot("lot-a", local(12, 2), 20, seq=1)
    assert d.lot("lot-a", local(12, 1), 10, seq=0).reason == "seq 0 already counted (last 1)"
    assert figures(d)["lots"]["lot-a"] == 20
    assert d.lot("lot-a", local(12, 3), 5, seq=0).reason is None
    assert figures(d)["lots"]["lot-a"] == 5
    d.badge(local(12, 1), "RN-1", "nurse", "on", seq=0)
    d.badge(local(12, 2), "RN-2", "nurse", "on", seq=1)
    assert (
        d.badge(local(12, 1), "RN-1", "nurse", "on", seq=0).reason
        == "seq 0 already counted (last 1)"
    )
    assert figures(d)["medical"]["nurses_on_duty"] == 2
    assert d.badge(local(12, 3), "RN-1", "nurse", "off", seq=0).reason is None
    assert figures(d)["medical"]["nurses_on_duty"] == 1
