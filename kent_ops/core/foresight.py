"""Foresight: when attendance will reach ``hold_at`` at its net rate of the last 10 minutes.

A deputy told HOLD with no warning has a queue and a crowd to turn back; told "HOLD in
about 12 min", the command post can open the overflow lot or slow the gates in time. This
is advice, never an alert and never a finding: no rule reads it and the report does not
rest anything on it (docs/law.md, "Foresight is advice").

The rate. The engine sees attendance only at its messages, so it keeps a *sample* at
each message it takes: the instant and the gates' net count (in less out). The net
count, not attendance: an inspector's adjustment corrects the figure, it is not persons
arriving; and a gate counter's first reading (its totals since the device started, an
hour's worth when the aggregator starts late) is where that counter starts, not
arrivals. The net rate at instant ``t`` is ``(N(t) - N(t - 10 min)) / 10 min``, where
``N(t - 10 min)`` is interpolated linearly between the two samples around that instant
(persons arrive continuously; counters report in batches). With less than 10 minutes of
samples there is no rate and no forecast. One sample a second is kept (the last in that
second), so 10 minutes take at most 601.

The forecast: ``hold_in_s = ceil((hold_at - attendance) / rate)`` while the rate is
above zero and attendance is below ``hold_at``; None otherwise.

When. Samples are taken at each message the engine takes, from that message's time,
never at a tick, and the forecast is the one at the last sample: a live run and its
replay, which tick at different instants, agree exactly. It is worked out when it is
read (the status, at most ten times a second), not at each of the thousands of
messages a minute that only add a sample. A gate command is published retained and
logged at every change, so it carries a coarser figure (:func:`quantise`, whole
minutes), taken at the first message of each minute of the engine's clock and whenever
the order itself changes, and republished only when that figure differs: at most one
command a minute for each gate (docs/protocol.md, "Foresight").
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kent_ops.core.counting import Counting
from kent_ops.core.timeutil import SECOND

__all__ = [
    "RATE_WINDOW_S",
    "WARN_UNDER_MIN",
    "Foresight",
    "hold_in",
    "hold_minutes",
    "hold_words",
    "quantise",
]

RATE_WINDOW_S = 600
"""The net rate is taken over this many seconds: the last 10 minutes."""
WARN_UNDER_MIN = 30
"""Screens warn of a coming HOLD only when it is fewer than this many minutes away."""
_WINDOW_US = RATE_WINDOW_S * SECOND
_MINUTE_US = 60 * SECOND

Sample = tuple[int, int]
"""(instant in microseconds, the gates' net count then, less their first readings)."""


def hold_in(samples: deque[Sample], attendance: int, hold_at: int) -> int | None:
    """Seconds from the last sample until attendance reaches ``hold_at`` at the net rate
    of the 10 minutes before it; None when it is not rising, is already there, or fewer
    than 10 minutes have been seen. ``samples`` are in time order, the first of them 10
    minutes or more before the last when that much has been seen."""
    remaining = hold_at - attendance
    if remaining <= 0 or len(samples) < 2:
        return None
    start = samples[-1][0] - _WINDOW_US
    t0, n0 = samples[0]
    if t0 > start:
        return None  # fewer than 10 minutes seen: no rate over them
    i = 1
    while samples[i][0] <= start:  # the start may have passed a sample or two since
        i += 1  # they were last trimmed (at most a second ago); the last lies after it
    t0, n0 = samples[i - 1]
    t1, n1 = samples[i]
    at_start = n0 + (n1 - n0) * (start - t0) / (t1 - t0)
    risen = samples[-1][1] - at_start
    if risen <= 0:
        return None
    seconds = remaining * RATE_WINDOW_S / risen
    whole = int(seconds)
    return whole if whole == seconds else whole + 1


def hold_minutes(hold_in_s: int) -> int:
    """The forecast in whole minutes, to the nearest and never below 1 ("about 1 min")."""
    return max(1, (hold_in_s + 30) // 60)


def quantise(hold_in_s: int | None) -> int | None:
    """What a gate command carries: the forecast in whole minutes, as seconds (720).

    Screens reading it word it as they would the exact figure (:func:`hold_words`).
    """
    return None if hold_in_s is None else 60 * hold_minutes(hold_in_s)


def hold_words(hold_in_s: int | None) -> str | None:
    """``"HOLD in about 12 min"`` when a HOLD is fewer than 30 minutes away; else None.

    The one wording every screen uses (the deputy's gate view on a terminal and on a
    phone, the inspector's dashboard), for the status's figure or a command's.
    """
    if hold_in_s is None:
        return None
    minutes = hold_minutes(hold_in_s)
    if minutes >= WARN_UNDER_MIN:
        return None
    return f"HOLD in about {minutes} min"


@dataclass(slots=True)
class Foresight:
    """The samples of the last 10 minutes and the forecasts made from them (a part of the
    engine's snapshot, :mod:`kent_ops.core.snapshot`)."""

    samples: deque[Sample] = field(default_factory=deque)
    started: set[str] = field(default_factory=set)
    """Gate counters whose first reading has been taken (and set aside as a start)."""
    baseline: int = 0
    """The net of those first readings: the samples count from it."""
    command_hold_in_s: int | None = None
    """The forecast the gate commands carry (:func:`quantise`)."""
    minute: int = -1
    """The minute of the engine's clock in which the commands' figure was last taken."""

    def observe(self, t: int, counts: Counting, source: str, hold_at: int) -> bool:
        """Take the counts after a message from ``source`` at ``t``; True when the gate
        commands' figure changed (they are to be republished)."""
        if source not in self.started:
            self.started.add(source)  # every source, so the next look is one set lookup
            gate = counts.gates.get(source)
            if (
                gate is not None
                and not counts.sensors[source].manual
                and (source not in counts.internal)
            ):
                self.baseline += gate.net
        net = counts.counter_attendance - self.baseline
        samples = self.samples
        if samples and samples[-1][0] // SECOND == t // SECOND:
            samples[-1] = (t, net)  # the same second, so the same minute: nothing is due
            return False
        samples.append((t, net))
        start = t - _WINDOW_US
        while len(samples) > 2 and samples[1][0] <= start:
            samples.popleft()
        minute = t // _MINUTE_US
        if minute == self.minute:
            return False
        self.minute = minute
        return self.refresh(counts.attendance, hold_at)

    def hold_in_s(self, attendance: int, hold_at: int) -> int | None:
        """The forecast at the last sample (the status's ``attendance.hold_in_s``)."""
        return hold_in(self.samples, attendance, hold_at)

    def refresh(self, attendance: int, hold_at: int) -> bool:
        """Give the gate commands the forecast now; True if their figure changed."""
        figure = quantise(hold_in(self.samples, attendance, hold_at))
        if figure == self.command_hold_in_s:
            return False
        self.command_hold_in_s = figure
        return True
