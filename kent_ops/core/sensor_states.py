"""Each kind of sensor's counting state: a gate's stitched totals, a lot's cars, the roster.

Each takes one message at a time, its ``seq`` judged first (:mod:`kent_ops.core.seq`):
a repeat changes nothing, an implausible jump is refused, a gap is noted with the
message that shows it, a new run of the device is believed. What the messages mean
across sensors (attendance, liveness, doubt) is :mod:`kent_ops.core.counting`'s.
Times are whole microseconds; everything here is incremental (the hot path of a replay).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from kent_ops.core.sensor_kinds import Badge, GateCount, LotOccupancy, Roster
from kent_ops.core.seq import Print, SeqTrack, Verdict, fingerprint
from kent_ops.core.timeutil import SECOND

__all__ = ["RATE_WINDOW_US", "GateCounter", "GateOutcome", "LotSensor", "Outcome", "StaffRoster"]

RATE_WINDOW_US = 60 * SECOND


class GateOutcome(NamedTuple):
    """What one sensor message did: counted, ignored as a duplicate, stitched, or rejected,
    and the numbers before it never received (a gap), if any."""

    effect: str  # counted | duplicate | restart | rejected
    reason: str | None = None
    missing: tuple[int, int] | None = None


Outcome = GateOutcome
"""What any sensor's message did (a gate's outcome is the general one)."""

_COUNTED = GateOutcome("counted")


def _taken(v: Verdict) -> GateOutcome:
    return _COUNTED if v.missing is None else GateOutcome("counted", None, v.missing)


@dataclass(slots=True)
class GateCounter:
    """Cumulative totals from one gate counter, stitched across device restarts.

    ``base_*`` hold what earlier runs of the device counted; ``device_*`` the current
    run's totals. Its ``seq`` (:mod:`kent_ops.core.seq`) says which message is a repeat,
    which follows a gap and which begins a new run; totals that fell tell a restart
    (docs/protocol.md, "Counting"):

    - a ``seq`` ahead with totals that fell is a restart that kept its ``seq``;
    - a ``seq`` back at 0 or 1, or at a number this run used with other figures, or
      below where this run was first heard, with totals that fell (and none that rose,
      above 1), is a restart whose first messages may be lost;
    - any other older ``seq`` is a repeat and changes nothing.

    The device's own ``ts`` decides nothing here.
    """

    device_in: int = 0
    device_out: int = 0
    base_in: int = 0
    base_out: int = 0
    restarts: int = 0
    recent: deque[tuple[int, int]] = field(default_factory=deque)
    seqs: SeqTrack = field(default_factory=SeqTrack)

    @property
    def in_total(self) -> int:
        return self.base_in + self.device_in

    @property
    def out_total(self) -> int:
        return self.base_out + self.device_out

    @property
    def net(self) -> int:
        return self.in_total - self.out_total

    @property
    def last_seq(self) -> int | None:
        return self.seqs.last

    def take_next(self, msg: GateCount, t: int) -> bool:
        """The common case, taken at once: the next ``seq``, totals that did not fall.
        False (nothing changed) for any other message: :meth:`apply` judges it."""
        seqs = self.seqs
        last = seqs.last
        if (
            last is None
            or msg.seq != last + 1
            or seqs.earlier
            or msg.in_total < self.device_in
            or msg.out_total < self.device_out
        ):
            return False
        seqs.take(fingerprint(msg), t)
        self._take(msg, t)
        return True

    def apply(self, msg: GateCount, t: int) -> GateOutcome:
        if self.take_next(msg, t):
            return _COUNTED
        seqs = self.seqs
        p = fingerprint(msg)
        v = seqs.judge(p, t)
        kind = v.kind
        if kind == "repeat":
            return GateOutcome("duplicate", v.reason)
        if kind == "implausible":
            return GateOutcome("rejected", v.reason)
        fell = msg.in_total < self.device_in or msg.out_total < self.device_out
        if kind == "back":
            if not (fell and self._new_run(msg, v)):
                return GateOutcome("duplicate", v.reason)
            return self._restart(msg, p, t, v.missing, f"at seq {msg.seq}")
        if fell and seqs.last is not None:
            kept = (
                f"keeping its seq (totals fell at seq {msg.seq}: in {self.device_in:,}→"
                f"{msg.in_total:,}, out {self.device_out:,}→{msg.out_total:,})"
            )
            return self._restart(msg, p, t, v.missing, kept)
        seqs.take(p, t)
        self._take(msg, t)
        return _taken(v)

    def _new_run(self, msg: GateCount, v: Verdict) -> bool:
        """An older ``seq`` whose totals fell: the first messages of a new run, not a
        redelivery (a redelivery is remembered whole, or has another run's number)."""
        last = self.seqs.last
        if msg.seq <= 1 and last is not None and msg.seq < last:
            return True
        rose = msg.in_total > self.device_in or msg.out_total > self.device_out
        return (v.reused or v.below) and not rose

    def _restart(
        self, msg: GateCount, p: Print, t: int, missing: tuple[int, int] | None, how: str
    ) -> GateOutcome:
        self.base_in += self.device_in
        self.base_out += self.device_out
        self.restarts += 1
        self.seqs.restart(p, t)
        self._take(msg, t)
        return GateOutcome(
            "restart",
            f"counter restarted {how}; totals before it kept "
            f"(in {self.base_in:,}, out {self.base_out:,})",
            missing,
        )

    def _take(self, msg: GateCount, t: int) -> None:
        device_in = self.device_in = msg.in_total
        self.device_out = msg.out_total
        recent = self.recent
        recent.append((t, self.base_in + device_in))
        cutoff = t - RATE_WINDOW_US
        while len(recent) > 2 and recent[1][0] <= cutoff:
            recent.popleft()

    def per_minute(self, now: int) -> float:
        """Persons in per minute over the last minute of messages."""
        recent = self.recent
        if len(recent) < 2:
            return 0.0
        t0, in0 = recent[0]
        t1, in1 = recent[-1]
        if now - t1 > RATE_WINDOW_US:
            return 0.0
        span = max(t1 - t0, 1)
        return (in1 - in0) * 60 * SECOND / span if span >= SECOND else 0.0


def _judged(seqs: SeqTrack, p: Print, t: int) -> GateOutcome | None:
    """A lot's or a badge reader's message by its ``seq`` alone: None when it is taken
    (``seqs`` moved on), else the outcome (a repeat, an older ``seq``, implausible).

    An older ``seq`` is taken only as a restart: back at 0 or 1 after a higher one, or
    at a number this run used with other figures."""
    v = seqs.judge(p, t)
    kind = v.kind
    if kind == "next":
        seqs.take(p, t)
        return None if v.missing is None else GateOutcome("counted", None, v.missing)
    if kind == "implausible":
        return GateOutcome("rejected", v.reason)
    seq, last = p[0], seqs.last
    if kind == "back" and (v.reused or (last is not None and seq <= 1 < last)):
        seqs.restart(p, t)  # taken as any reading: the device restarted
        return GateOutcome("restart", None, v.missing)
    return GateOutcome("duplicate", f"seq {seq} already counted (last {last})")


@dataclass(slots=True)
class LotSensor:
    """Cars now in one lot; older ``seq`` ignored, a device restart accepted."""

    capacity: int
    occupied: int | None = None
    seqs: SeqTrack = field(default_factory=SeqTrack)

    @property
    def last_seq(self) -> int | None:
        return self.seqs.last

    def take(self, msg: LotOccupancy, t: int = 0) -> GateOutcome:
        """Take the reading unless its ``seq`` says otherwise (:func:`_judged`)."""
        outcome = _judged(self.seqs, fingerprint(msg), t)
        if outcome is not None and outcome.effect in ("duplicate", "rejected"):
            return outcome
        self.occupied = msg.occupied
        return outcome or _COUNTED

    def apply(self, msg: LotOccupancy, t: int = 0) -> bool:
        """Whether the reading was taken."""
        return self.take(msg, t).effect in ("counted", "restart")


@dataclass(slots=True)
class StaffRoster:
    """Who is on duty, from badge scans and the readers' rosters; a second "on" for the
    same badge changes nothing. Each station's reader numbers its messages on its own."""

    on_duty: dict[str, str] = field(default_factory=dict)  # badge -> role
    counts: dict[str, int] = field(default_factory=lambda: {"doctor": 0, "nurse": 0, "security": 0})
    station_of: dict[str, str] = field(default_factory=dict)  # badge -> where it went on
    seqs: dict[str, SeqTrack] = field(default_factory=dict)  # station -> its reader's seq

    @property
    def last_seq(self) -> dict[str, int]:
        return {s: track.last for s, track in self.seqs.items() if track.last is not None}

    def take(self, station: str, msg: Badge | Roster, t: int = 0) -> GateOutcome:
        """A scan, or a roster, unless its ``seq`` says otherwise (:func:`_judged`)."""
        seqs = self.seqs.get(station)
        if seqs is None:
            seqs = self.seqs[station] = SeqTrack()
        outcome = _judged(seqs, fingerprint(msg), t)
        if outcome is not None and outcome.effect in ("duplicate", "rejected"):
            return outcome
        if isinstance(msg, Roster):
            self._restate(station, msg)
        else:
            self._scan(station, msg)
        return outcome or _COUNTED

    def apply(self, station: str, msg: Badge | Roster, t: int = 0) -> bool:
        """Whether the scan or roster was taken."""
        return self.take(station, msg, t).effect in ("counted", "restart")

    def _scan(self, station: str, msg: Badge) -> None:
        badge = msg.badge
        current = self.on_duty.get(badge)
        if msg.action == "on":
            self.station_of[badge] = station
            if current == msg.role:
                return
            if current is not None:
                self.counts[current] -= 1
            self.on_duty[badge] = msg.role
            self.counts[msg.role] += 1
        elif current is not None:
            self._off(badge, current)

    def _off(self, badge: str, role: str) -> None:
        del self.on_duty[badge]
        self.station_of.pop(badge, None)
        self.counts[role] -= 1

    def _restate(self, station: str, msg: Roster) -> None:
        """The station's roster, whole: whoever went on there and is not named is off."""
        named = {entry.badge for entry in msg.on_duty}
        gone = [b for b, s in self.station_of.items() if s == station and b not in named]
        for badge in gone:
            self._off(badge, self.on_duty[badge])
        for entry in msg.on_duty:
            self._scan(station, Badge(msg.seq, msg.ts, entry.badge, entry.role, "on"))
