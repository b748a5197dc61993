"""The replayed alerts against the alerts the live service logged.

The report takes its findings from a replay of the evidence log through the same engine
that ran live; the dashboards showed what the live engine published. The two must tell
the same story, so each alert is compared, field by field, with the last state of it
the live service logged, and any difference is named on the page and on stderr.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kent_ops.core import wire

__all__ = ["COMPARED_FIELDS", "WALL_TOLERANCE_S", "Comparison", "compare_with_live"]

COMPARED_FIELDS = (
    "id",
    "rule",
    "subject",
    "since",
    "raised_at",
    "ended_at",
    "cleared_at",
    "state",
)
"""The fields on which the replayed alerts must equal the ones published live."""

WALL_TOLERANCE_S = 2.0
"""With the wall clock the live engine also looked at moments the log does not record
(ticks that changed nothing); a message received just before such a tick was taken at
the tick. Replayed times may then differ from live ones by a fraction of a tick."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """How the replayed alerts compare with the ones the live service logged."""

    live_count: int
    replay_count: int
    problems: list[str]
    notes: list[str]

    @property
    def equal(self) -> bool:
        return not self.problems


def compare_with_live(
    replayed: Mapping[str, wire.Alert],
    live: Mapping[str, wire.Alert],
    *,
    clock: str,
    log_end: datetime | None,
) -> Comparison:
    """Check the replayed alerts against the last logged state of each live alert.

    With the sensor clock they must be equal on :data:`COMPARED_FIELDS`. With the wall
    clock, times may differ by up to :data:`WALL_TOLERANCE_S`, and an alert the replay
    sees cleared just before the log's end, which the live service (stopping) never
    looked at again, is noted rather than counted as a difference.
    """
    problems: list[str] = []
    notes: list[str] = []
    for alert_id in sorted(set(replayed) | set(live)):
        r, lv = replayed.get(alert_id), live.get(alert_id)
        if lv is None:
            problems.append(f"{alert_id} was found on replay but never logged live")
            continue
        if r is None:
            if alert_id.startswith("S-"):
                # The service's own alert (evidence storage, a flood, its broker session, a
                # log rolled back, a host clock jump): no message raised it, so a replay
                # cannot; what it is about is under data quality.
                notes.append(f"{alert_id} is the aggregator's own {lv.rule} alert")
            else:
                problems.append(f"{alert_id} was logged live but not found on replay")
            continue
        diffs = [f for f in COMPARED_FIELDS if getattr(r, f) != getattr(lv, f)]
        if clock == "wall":
            diffs = [f for f in diffs if not _close(getattr(r, f), getattr(lv, f))]
        if lv.stretches and not _same_stretches(r.stretches, lv.stretches, clock):
            diffs.append("stretches")
            if _cleared_at_the_end(diffs, r, lv, log_end):
                notes.append(
                    f"{alert_id} cleared at {_shown(r.cleared_at)}, just before the log ends; "
                    "the live service stopped before it looked again"
                )
                continue
        if diffs:
            shown = ", ".join(
                f"{f} {_shown(getattr(lv, f))!r} live vs {_shown(getattr(r, f))!r} replayed"
                for f in diffs
            )
            problems.append(f"{alert_id}: {shown}")
    return Comparison(len(live), len(replayed), problems, notes)


def _cleared_at_the_end(
    diffs: list[str], r: wire.Alert, lv: wire.Alert, log_end: datetime | None
) -> bool:
    """The wall clock's one allowed difference: the replay saw the alert clear just as the
    log ended, after the live service (stopping) last looked at it."""
    return (
        bool(diffs)
        and set(diffs) <= {"state", "cleared_at"}
        and lv.state == "active"
        and lv.ended_at is not None
        and r.state == "cleared"
        and log_end is not None
        and r.cleared_at is not None
        and r.cleared_at >= log_end - timedelta(seconds=WALL_TOLERANCE_S)
    )


def _same_stretches(replayed: list[wire.Stretch], live: list[wire.Stretch], clock: str) -> bool:
    """The same stretches, basis for basis and what each rests on; their times equal with
    the sensor clock, within :data:`WALL_TOLERANCE_S` with the wall clock. (A log written
    before alerts carried stretches has none live: nothing to compare.)"""
    if len(replayed) != len(live):
        return False
    for r, lv in zip(replayed, live, strict=True):
        if (r.basis, r.rests_on) != (lv.basis, lv.rests_on):
            return False
        for a, b in ((r.start, lv.start), (r.end, lv.end)):
            if a != b and not (clock == "wall" and _close(a, b)):
                return False
    return True


def _shown(value: Any) -> Any:
    """A compared value as the log writes it: a time as its ISO text, stretches as
    ``basis from–to`` one after another."""
    if isinstance(value, list) and all(isinstance(x, wire.Stretch) for x in value):
        return "; ".join(
            f"{x.basis} {x.start.isoformat()}–{x.end.isoformat() if x.end else '…'}" for x in value
        )
    return value.isoformat() if isinstance(value, datetime) else value


def _close(a: Any, b: Any) -> bool:
    if not isinstance(a, datetime) or not isinstance(b, datetime):
        return False
    return abs((a - b).total_seconds()) <= WALL_TOLERANCE_S
