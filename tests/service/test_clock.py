"""The service's clock against a wall clock and a steady clock the test moves by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kent_ops.service.clock import JUMP_S, ServiceClock

T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)


class Hands:
    """A wall clock and a steady clock: ``run`` moves both, ``set_wall`` only the wall."""

    def __init__(self) -> None:
        self.wall = T0
        self.mono = 1000.0

    def run(self, seconds: float) -> None:
        self.wall += timedelta(seconds=seconds)
        self.mono += seconds

    def set_wall(self, seconds: float) -> None:
        self.wall += timedelta(seconds=seconds)


def clock(h: Hands) -> ServiceClock:
    return ServiceClock(lambda: h.wall, lambda: h.mono)


def test_it_starts_at_the_wall_clock_and_runs_at_the_steady_rate() -> None:
    h = Hands()
    c = clock(h)
    assert c() == T0
    h.run(90)
    assert c() == T0 + timedelta(seconds=90)


def test_a_wall_clock_set_back_is_a_jump_and_time_goes_on() -> None:
    h = Hands()
    c = clock(h)
    h.run(10)
    h.set_wall(-600)
    check = c.check()
    assert check is not None
    assert check.jumped
    assert round(check.jump_s) == -600
    h.run(10)
    assert c() == T0 + timedelta(seconds=20)  # the real time, not the wall's
    assert c.check() is None  # the same jump, still in force


def test_a_jump_forward_then_corrected_leaves_the_clock_where_it_was() -> None:
    h = Hands()
    c = clock(h)
    h.set_wall(3600)
    assert c.check().jumped  # type: ignore[union-attr]
    h.run(30)
    assert c() == T0 + timedelta(seconds=30)
    h.set_wall(-3600)
    ended = c.check()
    assert ended is not None
    assert not ended.jumped
    assert c.jumped is None
    assert c() == T0 + timedelta(seconds=30)


def test_a_jump_to_elsewhere_is_a_new_jump() -> None:
    h = Hands()
    c = clock(h)
    h.set_wall(-600)
    assert c.check().jumped  # type: ignore[union-attr]
    h.set_wall(4200)  # now +3600
    again = c.check()
    assert again is not None
    assert again.jumped
    assert round(again.jump_s) == 3600


def test_a_small_disagreement_is_slewed_never_back() -> None:
    h = Hands()
    c = clock(h)
    h.set_wall(-(JUMP_S - 1))  # NTP sets the wall a few seconds back
    seen = [c()]
    for _ in range(1000):
        h.run(1)
        assert c.check() is None
        seen.append(c())
    assert seen == sorted(seen)
    assert abs((h.wall - c()).total_seconds()) < 0.01  # caught up by running slow


def test_it_never_starts_behind_the_time_the_log_reached() -> None:
    h = Hands()
    c = clock(h)
    logged = T0 + timedelta(minutes=10)  # the host clock was set 10 minutes back
    check = c.hold_at_least(logged)
    assert check is not None
    assert check.jumped
    assert round(check.jump_s) == -600
    assert c() == logged
    h.run(5)
    assert c() == logged + timedelta(seconds=5)
    assert c.hold_at_least(T0) is None  # behind it already: nothing to do
