"""The service's clock: the wall clock at the start, then a steady clock's elapsed time.

With ``--clock wall`` every receive time, tick and deadline comes from here. The host's
wall clock can be set back or forward at any moment (a person, a bad NTP server, a
laptop whose battery-backed clock was wrong); the engine's time never goes back, so a
clock moved back 10 minutes froze every pending alert and staleness deadline, and one
moved forward an hour and corrected left the engine an hour ahead for good.

So :class:`ServiceClock` reads the wall clock once, at the start, and from then on adds
the elapsed time of a clock that only ever moves forward at the real rate (Linux's
``CLOCK_BOOTTIME``, which also counts a suspended laptop's sleep; elsewhere
``time.monotonic``). It is re-anchored carefully:

- a small disagreement with the wall clock (NTP's corrections, below
  :data:`JUMP_S`) is followed by slewing: at most 1 % faster or slower, never back;
- a larger one is a **jump**: :meth:`ServiceClock.check` reports it (the service records
  it and raises ``clock-jump``) and the service keeps its own time; when the wall clock
  agrees again the jump is over (reported too). A jump that lasts is never followed:
  restart the service once the host clock is right, and it starts from the wall clock;
- at a start, a wall clock behind the time the evidence log already reached is a jump
  too: the service starts from the log's time (:meth:`ServiceClock.hold_at_least`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kent_ops.evidence.system import ClockAgrees, ClockJump

__all__ = ["JUMP_S", "ClockCheck", "ServiceClock", "steady"]

JUMP_S = 5.0
"""A disagreement between the wall clock and the service's clock beyond this is a jump."""
SLEW = 0.01
"""How much faster or slower the service's clock may run to follow a small disagreement."""


def steady() -> float:
    """Seconds on a clock that never jumps and keeps counting while the machine sleeps."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is not None:
        return time.clock_gettime(boottime)
    return time.monotonic()


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class ClockCheck:
    """A jump starting (``jumped``) or ending: the wall clock against the service's own."""

    jumped: bool
    jump_s: float
    """The wall clock less the service's clock, in seconds."""
    wall: datetime
    service: datetime

    def record(self) -> ClockJump | ClockAgrees:
        """The system record that says so."""
        kind = ClockJump if self.jumped else ClockAgrees
        return kind(
            jump_s=round(self.jump_s, 3),
            host_clock=self.wall.isoformat(),
            service_clock=self.service.isoformat(),
        )


class ServiceClock:
    """The wall clock at the start plus steady elapsed time; safe from any thread.

    Args:
        wall: the host's wall clock (UTC); tests pass a clock they can move.
        mono: the steady clock, in seconds.
        jump_s: the disagreement that counts as a jump.
    """

    def __init__(
        self,
        wall: Callable[[], datetime] = _utcnow,
        mono: Callable[[], float] = steady,
        *,
        jump_s: float = JUMP_S,
    ) -> None:
        self._wall = wall
        self._mono = mono
        self.jump_s = jump_s
        self._lock = threading.Lock()
        self._anchor_wall = wall()
        self._anchor_mono = mono()
        self._last = self._anchor_wall
        self._checked_mono = self._anchor_mono
        self.jumped: ClockCheck | None = None
        """The jump in force, if the wall clock disagrees now."""

    def __call__(self) -> datetime:
        """The service's time now: never earlier than any it gave before."""
        with self._lock:
            return self._now()

    def _now(self) -> datetime:
        at = self._anchor_wall + timedelta(seconds=self._mono() - self._anchor_mono)
        if at > self._last:
            self._last = at
        return self._last

    def hold_at_least(self, floor: datetime) -> ClockCheck | None:
        """Start no earlier than ``floor`` (the time the log reached); a jump if that is
        further ahead of the wall clock than a few seconds."""
        with self._lock:
            now = self._now()
            if floor <= now:
                return None
            self._anchor_wall += floor - now
            self._last = floor
            behind = (now - floor).total_seconds()
            if -behind <= self.jump_s:
                return None
            self.jumped = ClockCheck(True, behind, now, floor)
            return self.jumped

    def check(self) -> ClockCheck | None:
        """Compare with the wall clock: a jump that starts or ends, else None (slewing a
        small disagreement on the way)."""
        wall = self._wall()
        with self._lock:
            mono = self._mono()
            service = self._now()
            off = (wall - service).total_seconds()
            elapsed = max(0.0, mono - self._checked_mono)
            self._checked_mono = mono
            jump = self.jumped
            if jump is None:
                if abs(off) > self.jump_s:
                    self.jumped = ClockCheck(True, off, wall, service)
                    return self.jumped
                step = max(-SLEW * elapsed, min(SLEW * elapsed, off))
                self._anchor_wall += timedelta(seconds=step)
                return None
            if abs(off) <= self.jump_s:
                self.jumped = None
                return ClockCheck(False, off, wall, service)
            if abs(off - jump.jump_s) > self.jump_s:  # it jumped again, elsewhere
                self.jumped = ClockCheck(True, off, wall, service)
                return self.jumped
            return None
