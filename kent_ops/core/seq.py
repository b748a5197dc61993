"""One device's sequence numbers: what each new ``seq`` says about the messages before it.

Every sensor numbers its messages, one more each (docs/protocol.md, "Counting"). From
the number and the few messages remembered here, each new message is one of:

- a **repeat**: the very message already taken (QoS 1 redelivers; it may come long
  after newer ones, even after the device restarted), or an older ``seq`` of this run;
- the **next** one, or one further on: the numbers skipped are a **gap**, messages the
  device sent that never reached the log (a broker killed between its saves);
- **implausible**: further ahead than the device could have sent since its last message
  (more than :data:`MAX_RATE` a second of the time between them, and at least
  :data:`IMPLAUSIBLE_FROM`): refused, and it does not become the last ``seq``;
- **back**: a ``seq`` already passed that is no message of this run: the device
  restarted (``seq`` back at 0 or 1, a number this run used for another message, or
  one below where this run was first heard). The counting state of its kind decides
  (a gate's totals that fell: :mod:`kent_ops.core.counting`).

A message is known by a fingerprint of its whole content, not by its ``ts``: on the wall
clock a device's own clock never decides which run of it a message belongs to. Pure;
times are the engine's microseconds.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import msgspec

from kent_ops.core.sensor_kinds import Reading
from kent_ops.core.timeutil import SECOND

__all__ = [
    "FIRST_KEPT",
    "GAPS_KEPT",
    "IMPLAUSIBLE_FROM",
    "MAX_RATE",
    "RECENT_KEPT",
    "Gap",
    "SeqTrack",
    "Verdict",
    "fingerprint",
    "numbers",
]

MAX_RATE = 10
"""The most messages a device is taken to send a second."""
IMPLAUSIBLE_FROM = 1_000
"""A jump ahead of fewer numbers than this is always a gap, never implausible."""
FIRST_KEPT = 8
"""The first messages of a run remembered: a restart whose first messages were lost
re-uses one of their numbers with other figures."""
RECENT_KEPT = 24
"""The latest messages remembered (at least this many, at most twice), of this run and
(after a restart) of the one before: what the broker may still redeliver."""

GAPS_KEPT = 10_000
"""Gaps the engine lists one by one for the report; past them, each sensor counts its own."""

Print = tuple[int, int]
"""A message's ``seq`` and a checksum of its whole content."""
_ENCODE = msgspec.json.Encoder().encode


def fingerprint(msg: Reading) -> Print:
    """The message's ``seq`` and a CRC-32 of its content (the same in every process)."""
    return (msg.seq, zlib.crc32(_ENCODE(msg)))


def numbers(first: int, last: int) -> str:
    """``seq 7`` or ``seq 7–40``: the numbers of a gap, as sentences and reasons say them."""
    return f"seq {first:,}" if first == last else f"seq {first:,}–{last:,}"


class Verdict(NamedTuple):
    """What a message's ``seq`` says (see the module docstring).

    ``missing`` is the gap before it (first, last), if any (for ``back``: the numbers
    before it in a new run, from 1); ``reason`` why a repeat is one, or why an
    implausible jump is refused. For ``back``: ``reused``, this run used the number for
    another message (a device never does: it is another run); ``below``, the number is
    below where this run was first heard.
    """

    kind: Literal["repeat", "next", "implausible", "back"]
    missing: tuple[int, int] | None = None
    reason: str | None = None
    reused: bool = False
    below: bool = False


_NEXT = Verdict("next")


class Gap(NamedTuple):
    """One gap: the sensor, the numbers never received, when it was found (the engine's
    time) and the evidence record that showed it."""

    sensor: str
    first: int
    last: int
    at: int
    record: int | None


@dataclass(slots=True)
class SeqTrack:
    """The sequence numbers one sensor has sent: the last, and a few messages remembered."""

    last: int | None = None
    last_at: int | None = None
    """When the last ``seq`` was taken (the engine's time)."""
    first: int | None = None
    """The lowest ``seq`` taken in the device's current run (where it was first heard)."""
    start: list[Print] = field(default_factory=list)
    """The current run's first messages taken (up to :data:`FIRST_KEPT`)."""
    recent: list[Print] = field(default_factory=list)
    """The current run's latest messages taken (:data:`RECENT_KEPT` to twice as many)."""
    earlier: list[Print] = field(default_factory=list)
    """The latest messages of the runs before (up to :data:`RECENT_KEPT`)."""
    gaps: int = 0
    """Gaps found so far."""
    missing: int = 0
    """Numbers never received, over all its gaps."""
    last_gap: tuple[int, int] | None = None

    def judge(self, p: Print, t: int) -> Verdict:
        """What the message with fingerprint ``p``, arriving at ``t``, is."""
        seq = p[0]
        last = self.last
        if last is None:
            return _NEXT
        if seq == last + 1 and not self.earlier:
            return _NEXT  # the common case, first
        if p in self.recent or p in self.start or p in self.earlier:
            if seq > last:
                why = f"seq {seq} is from an earlier run of the device (redelivered)"
            elif seq <= 1 and p in self.start:
                why = f"seq {seq} already counted (redelivered)"
            else:
                why = f"seq {seq} already counted (last {last})"
            return Verdict("repeat", reason=why)
        if seq > last:
            jump = seq - last
            since = (t - (self.last_at if self.last_at is not None else t)) / SECOND
            if jump >= IMPLAUSIBLE_FROM and jump > MAX_RATE * since:
                return Verdict(
                    "implausible",
                    reason=(
                        f"seq {seq:,} is implausible: {jump:,} ahead of seq {last:,} in "
                        f"{since:,.0f} s (a device sends at most {MAX_RATE} a second); "
                        f"its last seq stays {last:,}"
                    ),
                )
            return Verdict("next", (last + 1, seq - 1) if jump > 1 else None)
        reused = any(q[0] == seq for q in self.start) or any(q[0] == seq for q in self.recent)
        below = self.first is not None and seq < self.first
        missing = (1, seq - 1) if seq > 1 else None
        why = f"seq {seq} already counted (last {last})"
        return Verdict("back", missing, why, reused, below)

    def take(self, p: Print, t: int) -> None:
        """The message is taken: its ``seq`` is the last now."""
        self.last = p[0]
        self.last_at = t
        start = self.start
        if len(start) < FIRST_KEPT:
            start.append(p)
            if self.first is None:  # a taken message is the next one, or begins a run
                self.first = p[0]
        recent = self.recent
        recent.append(p)
        if len(recent) >= 2 * RECENT_KEPT:
            del recent[:RECENT_KEPT]  # trimmed now and then, not at every message
            # The earlier run's messages a broker may still redeliver come soon after the
            # restart; once this run has sent as many, they are not looked for any more.
            self.earlier = []

    def restart(self, p: Print, t: int) -> None:
        """The device began a new run with this message: the old run's latest are kept
        as earlier (a redelivery of them is a repeat), and this one is taken."""
        self.earlier = [*self.earlier, *self.recent][-RECENT_KEPT:]
        self.recent = []
        self.start = []
        self.first = None
        self.take(p, t)

    def gap(self, missing: tuple[int, int]) -> None:
        """Note a gap (its numbers never received)."""
        self.gaps += 1
        self.missing += missing[1] - missing[0] + 1
        self.last_gap = missing
