"""Slowing guesses and ending sessions: pure bookkeeping on a clock the tests move."""

from __future__ import annotations

from kent_ops.web.sessions import Sessions
from kent_ops.web.throttle import Key, SignInThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fail(throttle: SignInThrottle, keys: tuple[Key, Key]) -> None:
    assert throttle.begin(keys)
    throttle.end(keys, ok=False)


def test_each_failure_doubles_the_wait_from_that_address_only() -> None:
    clock = Clock()
    throttle = SignInThrottle(first_s=1, most_s=60, clock=clock)
    keys = throttle.keys("insp-1", "10.0.0.5")
    waits = []
    for _ in range(8):
        fail(throttle, keys)
        waits.append(throttle.wait_s(keys))
        assert not throttle.begin(keys)  # refused until the wait is over
        clock.now += waits[-1]
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60]
    # Another name from this phone waits too; the same name from another phone does not.
    fail(throttle, keys)
    assert throttle.wait_s(throttle.keys("insp-2", "10.0.0.5")) == 60
    assert throttle.wait_s(throttle.keys("insp-1", "10.0.0.9")) == 0
    assert throttle.begin(throttle.keys("insp-1", "10.0.0.9"))


def test_a_success_clears_its_name_but_not_its_address() -> None:
    clock = Clock()
    throttle = SignInThrottle(clock=clock)
    keys = throttle.keys("jsmith", "10.0.0.7")
    fail(throttle, throttle.keys("insp-1", "10.0.0.7"))
    clock.now += 1
    fail(throttle, keys)
    clock.now += throttle.wait_s(keys)
    assert throttle.begin(keys)
    assert not throttle.begin(keys)  # a parallel attempt while the first is checked
    assert not throttle.begin(throttle.keys("other", "10.0.0.7"))  # this address failed
    throttle.end(keys, ok=True)
    assert throttle.failures(keys[0]) == 0
    assert throttle.failures(keys[1]) == 2  # the guesses at insp-1 still count
    assert throttle.wait_s(keys) == 0
    fail(throttle, throttle.keys("insp-1", "10.0.0.7"))
    assert throttle.wait_s(throttle.keys("insp-1", "10.0.0.7")) == 4  # 1, 2, then 4: no reset


def test_old_failures_are_forgotten_and_the_table_stays_small() -> None:
    clock = Clock()
    throttle = SignInThrottle(forget_s=100, most_keys=50, clock=clock)
    for i in range(200):
        fail(throttle, throttle.keys(f"made-up-{i}", f"10.0.{i // 250}.{i % 250}"))
    assert len(throttle._failures) <= 50
    clock.now += 101
    fail(throttle, throttle.keys("x", "10.9.9.9"))
    assert len(throttle._failures) == 2


def test_signing_in_again_and_again_keeps_a_bounded_number_of_sessions() -> None:
    sessions = Sessions(60, most_per_account=3, clock=Clock())
    opened = [sessions.open("insp-1", "10.0.0.5", "pw") for _ in range(5)]
    other = sessions.open("jsmith", "10.0.0.6", "pw2")
    assert sessions.crowded("insp-1") == opened[:2]  # the oldest end
    assert [sessions.get(s.token) for s in opened] == [None, None, *opened[2:]]
    assert sessions.crowded("insp-1") == []
    assert sessions.get(other.token) is other
    assert len(sessions) == 4


def test_a_session_lasts_its_time_and_ends_with_its_account() -> None:
    clock = Clock()
    sessions = Sessions(60, clock=clock)
    one = sessions.open("insp-1", "10.0.0.5", "pw")
    two = sessions.open("jsmith", "10.0.0.6", "pw2")
    assert one.token != two.token
    assert len(one.token) >= 40
    assert sessions.get(one.token) is one
    assert sessions.get("forged") is None
    assert sessions.get(None) is None
    clock.now += 30
    assert sessions.sweep({"insp-1"}) == [two]  # jsmith was removed from the users file
    assert two.password == ""  # the password goes with the session
    clock.now += 30
    assert sessions.get(one.token) is None
    assert len(sessions) == 0


def test_people_signing_in_at_once_from_one_address_are_not_held_up() -> None:
    throttle = SignInThrottle(clock=Clock())
    first = throttle.keys("insp-1", "10.0.0.1")
    second = throttle.keys("insp-2", "10.0.0.1")  # the same shared network
    assert throttle.begin(first)
    assert throttle.begin(second)
    assert throttle.begin(throttle.keys("insp-1", "10.0.0.2"))  # another phone: its own check
    assert not throttle.begin(first)  # but one check per name from one address
    throttle.end(first, ok=True)
    throttle.end(second, ok=False)
    assert throttle.wait_s(throttle.keys("insp-3", "10.0.0.1")) == 1
