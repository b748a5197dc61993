"""The service's timers as plain bookkeeping over a monotonic instant the test passes."""

from __future__ import annotations

from kent_ops.service.rhythm import Due, Rhythm, Timing

T = Timing(status_min_interval_s=0.1, heartbeat_s=5, snapshot_s=10, checkpoint_s=60, tick_s=0.5)


def test_everything_is_due_at_first_and_ticks_only_on_the_wall_clock() -> None:
    everything = Due(snapshot=True, checkpoint=True, tick=True, engine=True)
    assert Rhythm(T, wall=True).due(0.0) == everything
    assert Rhythm(T, wall=False).due(0.0) == everything._replace(tick=False)
    assert not Due(False, False, False)
    assert Due(False, False, False, engine=True)


def test_the_engine_snapshot_comes_round_after_its_own_interval() -> None:
    r = Rhythm(Timing(engine_snapshot_s=300, snapshot_s=10, checkpoint_s=60), wall=False)
    r.done(100.0, r.due(100.0))
    assert not r.due(399.9).engine
    assert r.due(400.0).engine
    assert r.wait_time(395.0) <= 1.0
    r.done(400.0, Due(snapshot=False, checkpoint=False, tick=False, engine=True))
    assert not r.due(699.0).engine


def test_each_timer_comes_round_after_its_interval() -> None:
    r = Rhythm(T, wall=True)
    r.done(100.0, r.due(100.0))
    r.ticked(100.0)
    assert not r.due(100.4)
    assert r.due(100.5) == Due(snapshot=False, checkpoint=False, tick=True)
    assert r.due(110.0).snapshot
    assert not r.due(159.9).checkpoint
    assert r.due(160.0).checkpoint


def test_a_changed_picture_goes_out_at_most_every_interval_and_the_heartbeat_always() -> None:
    r = Rhythm(T, wall=False)
    assert r.status_due(0.0)
    r.status_sent(0.0)
    assert not r.status_dirty
    assert not r.status_due(0.05)
    r.status_dirty = True
    assert not r.status_due(0.05)  # rate-limited
    assert r.status_due(0.1)
    r.status_sent(0.1)
    assert not r.status_due(5.0)
    assert r.status_due(5.1)  # the heartbeat


def test_the_worker_sleeps_until_the_next_timer_at_most_a_second() -> None:
    r = Rhythm(T, wall=True)
    r.done(0.0, Due(True, True, False, engine=True))
    r.ticked(0.0)
    r.status_sent(0.0)
    assert r.wait_time(0.25) == 0.25  # the next tick
    assert r.wait_time(0.25, retry_at=0.375) == 0.125  # a storage retry before it
    sensor = Rhythm(T, wall=False)
    sensor.done(0.0, Due(True, True, False, engine=True))
    sensor.status_sent(0.0)
    assert sensor.wait_time(0.0) == 1.0
    assert sensor.wait_time(4.5) == 0.5  # the heartbeat
