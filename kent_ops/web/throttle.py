"""Slowing down password guessing without letting a guesser lock anyone else out.

Each failed sign-in counts against two keys: the client address, and the name *from
that address*. After the k-th failure in a row on a key the next try on it is refused
for ``first_s · 2^(k-1)`` seconds, up to ``most_s``. So one phone guessing, whether
one person's password or many names, slows down fast; but nothing counts against a
name as such, so failures from one address never keep the real person out from
another (a guesser at the gate cannot lock the inspector out of the command post).

A success clears only its own name-from-address key. The address keeps its failures:
signing in to one's own account between guesses must not reset the wait on guessing
someone else's. A name from an address, and an address that has failed, is checked
one attempt at a time, so parallel requests cannot slip past the wait. A key with no
failure for ``forget_s`` is forgotten, and the table has a size limit, so a flood of
made-up names cannot fill the server's memory.

What this leaves: guesses spread over many addresses each get their own allowance
(one every ``most_s`` per address once slowed down). Against that stands the strength
of the passwords themselves: they are broker passwords, to be made long and random
(docs/security.md, "Sign-in").

Pure bookkeeping on an injected monotonic clock: the tests drive the clock.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Key", "SignInThrottle"]

Key = tuple[str, ...]
"""``("address", ip)`` or ``("name", name, ip)``."""


@dataclass(slots=True)
class _Failures:
    count: int
    until: float
    last: float


class SignInThrottle:
    """Exponential delay after failed sign-ins, per address and per name from an address."""

    def __init__(
        self,
        *,
        first_s: float = 1.0,
        most_s: float = 300.0,
        forget_s: float = 3600.0,
        most_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first_s, self.most_s, self.forget_s = first_s, most_s, forget_s
        self.most_keys = most_keys
        self.clock = clock
        self._failures: dict[Key, _Failures] = {}
        self._busy: Counter[Key] = Counter()

    @staticmethod
    def keys(name: str, address: str) -> tuple[Key, Key]:
        """The two keys a sign-in attempt counts against: the name from here, and here."""
        return ("name", name, address), ("address", address)

    def wait_s(self, keys: Iterable[Key]) -> float:
        """How long until an attempt on these keys is allowed (0: now)."""
        now = self.clock()
        waits = [f.until - now for k in keys if (f := self._failures.get(k)) is not None]
        return max([0.0, *waits])

    def begin(self, keys: Iterable[Key]) -> bool:
        """Claim the keys for one attempt; False while waiting or another attempt is checked.

        A name from an address is checked one attempt at a time, and so is an address
        that has failed: parallel guesses cannot slip past the wait, while people
        signing in at once from one address (a shared network) are not held up until
        one of them fails.
        """
        keys = tuple(keys)
        if self.wait_s(keys) > 0:
            return False
        if any(k in self._busy and (k[0] == "name" or self.failures(k)) for k in keys):
            return False
        self._busy.update(keys)
        return True

    def end(self, keys: Iterable[Key], *, ok: bool) -> None:
        """Record an attempt's outcome and release its keys."""
        keys = tuple(keys)
        self._busy.subtract(keys)
        self._busy += Counter()  # drops the keys no attempt holds any more
        if ok:
            for key in keys:
                if key[0] == "name":
                    self._failures.pop(key, None)
            return
        now = self.clock()
        self._forget(now)
        for key in keys:
            failures = self._failures.get(key)
            count = 1 if failures is None else failures.count + 1
            delay = min(self.first_s * 2 ** min(count - 1, 30), self.most_s)
            self._failures[key] = _Failures(count, now + delay, now)

    def failures(self, key: Key) -> int:
        """Failures in a row on this key (for the log and the tests)."""
        failures = self._failures.get(key)
        return 0 if failures is None else failures.count

    def _forget(self, now: float) -> None:
        stale = [k for k, f in self._failures.items() if now - f.last > self.forget_s]
        for key in stale:
            del self._failures[key]
        excess = len(self._failures) - self.most_keys + 2
        if excess > 0:
            oldest = sorted(self._failures, key=lambda k: self._failures[k].last)[:excess]
            for key in oldest:
                del self._failures[key]
