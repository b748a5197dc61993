"""The service's rhythm: when the worker ticks, snapshots, checkpoints and sends a status.

Pure bookkeeping over a monotonic clock the caller passes in, so it can be tested
without threads or sleeps. The worker asks :meth:`Rhythm.due` which timers are due,
:meth:`Rhythm.status_due` whether a status must go out, and :meth:`Rhythm.wait_time`
how long it may sleep; it reports back what it did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["Due", "Rhythm", "Timing"]

_NEVER = -1e9


@dataclass(frozen=True, slots=True)
class Timing:
    """The service's rhythm. Defaults meet docs/protocol.md; tests may shorten them.

    A batch closes at ``batch_max`` messages or ``batch_window_s`` after its first one:
    long enough to amortise the fsync of a commit, short enough to keep publish→status
    latency well under 200 ms. The status goes out at most every
    ``status_min_interval_s`` and at least every ``heartbeat_s``; a status snapshot is
    logged every ``snapshot_s``, the engine's whole state (a ``snapshot`` record, which
    a restart starts from) every ``engine_snapshot_s``, and a checkpoint every
    ``checkpoint_s``; with the wall clock the engine's time passes every ``tick_s``. A
    refused commit is retried after ``retry_first_s``, doubling up to ``retry_max_s``.
    At a start the broker's retained checkpoint is awaited ``checkpoint_wait_s`` at most.
    Rejected messages from one source may add ``flood_budget_bytes`` to the log every
    ``flood_period_s``; past that they are counted, not stored (docs/protocol.md).
    """

    batch_max: int = 500
    batch_window_s: float = 0.01
    status_min_interval_s: float = 0.1
    heartbeat_s: float = 5.0
    snapshot_s: float = 10.0
    checkpoint_s: float = 60.0
    engine_snapshot_s: float = 300.0
    tick_s: float = 0.5
    retry_first_s: float = 0.5
    retry_max_s: float = 10.0
    checkpoint_wait_s: float = 5.0
    flood_budget_bytes: int = 64 * 1024
    flood_period_s: float = 60.0


class Due(NamedTuple):
    """Which timers are due now."""

    snapshot: bool
    checkpoint: bool
    tick: bool
    engine: bool = False
    """The engine's whole state is due (a ``snapshot`` record)."""

    def __bool__(self) -> bool:
        return self.snapshot or self.checkpoint or self.tick or self.engine


class Rhythm:
    """The last time each timer ran, and whether the live picture changed since a status.

    Args:
        timing: the intervals.
        wall: the engine runs on the wall clock, so it must be ticked as time passes.
    """

    def __init__(self, timing: Timing, *, wall: bool) -> None:
        self.timing = timing
        self.wall = wall
        self.status_dirty = True
        """The picture changed (or a new connection wants it) since the last status."""
        self.last_status = _NEVER
        self.last_snapshot = _NEVER
        self.last_checkpoint = _NEVER
        self.last_tick = _NEVER
        self.last_engine = _NEVER

    def due(self, mono: float) -> Due:
        t = self.timing
        return Due(
            snapshot=mono - self.last_snapshot >= t.snapshot_s,
            checkpoint=mono - self.last_checkpoint >= t.checkpoint_s,
            tick=self.wall and mono - self.last_tick >= t.tick_s,
            engine=mono - self.last_engine >= t.engine_snapshot_s,
        )

    def done(self, mono: float, due: Due) -> None:
        """The snapshots and checkpoint of ``due`` are committed."""
        if due.snapshot:
            self.last_snapshot = mono
        if due.checkpoint:
            self.last_checkpoint = mono
        if due.engine:
            self.last_engine = mono

    def ticked(self, mono: float) -> None:
        self.last_tick = mono

    def status_due(self, mono: float) -> bool:
        """A changed picture at most every ``status_min_interval_s``; the heartbeat always."""
        t = self.timing
        since = mono - self.last_status
        return (self.status_dirty and since >= t.status_min_interval_s) or since >= t.heartbeat_s

    def status_sent(self, mono: float) -> None:
        self.last_status = mono
        self.status_dirty = False

    def wait_time(self, mono: float, retry_at: float | None = None) -> float:
        """How long the worker may sleep before a timer (or a storage retry) is due."""
        t = self.timing
        due = [
            self.last_status + t.heartbeat_s,
            self.last_snapshot + t.snapshot_s,
            self.last_checkpoint + t.checkpoint_s,
            self.last_engine + t.engine_snapshot_s,
        ]
        if self.status_dirty:
            due.append(self.last_status + t.status_min_interval_s)
        if self.wall:
            due.append(self.last_tick + t.tick_s)
        if retry_at is not None:
            due.append(retry_at)
        return max(0.0, min(min(due) - mono, 1.0))
