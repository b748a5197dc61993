"""Slowing guesses and ending sessions: pure bookkeeping on a clock the tests move."""

from __future__ import annotations

from kent_ops.web.sessions import Sessions
from kent_ops.web.throttle import SignInThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fail(throttle: SignInThrottle, keys: tuple[str, str]) -> None:
    assert throttle.begin(keys)
    throttle.end(keys, ok=False)


def test_each_failure_doubles_the_wait_per_account_and_per_address() -> None:
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
    # The same name from another phone waits too, and so does another name from this one.
    fail(throttle, keys)
    assert throttle.wait_s(throttle.keys("insp-1", "10.0.0.9")) == 60
    assert throttle.wait_s(throttle.keys("insp-2", "10.0.0.5")) == 60
    assert throttle.wait_s(throttle.keys("insp-2", "10.0.0.9")) == 0


def test_a_success_clears_the_wait_and_one_attempt_is_checked_at_a_time() -> None:
    clock = Clock()
    throttle = SignInThrottle(clock=clock)
    keys = throttle.keys("jsmith", "10.0.0.7")
    fail(throttle, keys)
    clock.now += 1
    assert throttle.begin(keys)
    assert not throttle.begin(keys)  # a parallel attempt while the first is checked
    assert not throttle.begin(throttle.keys("other", "10.0.0.7"))  # this address failed
    throttle.end(keys, ok=True)
    assert throttle.failures(keys[0]) == 0
    assert throttle.wait_s(keys) == 0


def test_old_failures_are_forgotten_and_the_table_stays_small() -> None:
    clock = Clock()
    throttle = SignInThrottle(forget_s=100, most_keys=50, clock=clock)
    for i in range(200):
        fail(throttle, throttle.keys(f"made-up-{i}", f"10.0.{i // 250}.{i % 250}"))
    assert len(throttle._failures) <= 50
    clock.now += 101
    fail(throttle, throttle.keys("x", "10.9.9.9"))
    assert len(throttle._failures) == 2


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
    assert not throttle.begin(throttle.keys("insp-1", "10.0.0.2"))  # one check per name
    throttle.end(first, ok=True)
    throttle.end(second, ok=False)
    assert throttle.wait_s(throttle.keys("insp-3", "10.0.0.1")) == 1
