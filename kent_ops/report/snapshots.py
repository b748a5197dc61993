"""The engine snapshots in the log, each checked against the replay that passes it.

The live service writes its engine's whole state into the log every few minutes (a
``snapshot`` record), and a restarted service starts from the last one instead of
replaying everything. The report still replays from the first record (that is the
proof), and at each snapshot it compares its own engine's state with the one written
there: a snapshot that disagrees would have made a restarted service stand somewhere
the log does not prove, so it is a finding of the data-quality section. A snapshot
written by another program version, or under another permit file, cannot be compared
and is listed as such.

:class:`SnapshotChecks` is the replay's hook (the collector calls it at each snapshot
record); :func:`snapshot_section` is the page's paragraph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from html import escape

from kent_ops.core.engine import Engine
from kent_ops.core.snapshot import SnapshotRefused, differences
from kent_ops.evidence.replay import Replayed

__all__ = ["SnapshotCheck", "SnapshotChecks", "snapshot_section"]


@dataclass(frozen=True, slots=True)
class SnapshotCheck:
    """One snapshot record: equal to the replay's state, different (how), or not compared."""

    record: int
    at: datetime
    matched: bool | None
    """None: not compared (``detail`` says why)."""
    detail: list[str] = field(default_factory=list)


class SnapshotChecks:
    """The replay's hook at each ``snapshot`` record; keeps one result per snapshot."""

    def __init__(self) -> None:
        self.results: list[SnapshotCheck] = []

    def __call__(self, rec: Replayed, engine: Engine) -> None:
        # The live service collected its engine's changes just before it wrote the
        # snapshot; so does the replay here (what it has to publish is not the report's).
        engine.collect_changes()
        try:
            found = differences(engine, rec.payload)
        except SnapshotRefused as exc:
            self.results.append(SnapshotCheck(rec.id, rec.received_at, None, [str(exc)]))
            return
        self.results.append(SnapshotCheck(rec.id, rec.received_at, not found, found))

    @property
    def disagreeing(self) -> list[SnapshotCheck]:
        return [c for c in self.results if c.matched is False]

    @property
    def not_compared(self) -> list[SnapshotCheck]:
        return [c for c in self.results if c.matched is None]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def snapshot_section(checks: SnapshotChecks, when: Callable[[datetime], str]) -> list[str]:
    """The data-quality paragraph on the engine snapshots (HTML; ``when`` writes a time)."""
    out = ["<h3>Engine snapshots</h3>"]
    results = checks.results
    if not results:
        out.append("<p>The log holds no engine snapshot.</p>")
        return out
    compared = len(results) - len(checks.not_compared)
    bad = checks.disagreeing
    out.append(
        f"<p>The log holds {_count(len(results), 'engine snapshot')} (the state a restarted "
        f"service starts from); {compared:,} compared with the replay's state at its record, "
        f"{'every one equal' if not bad else f'{len(bad):,} different'}.</p>"
    )
    if bad:
        items = "".join(
            f"<li>record {c.record:,} ({escape(when(c.at))}): "
            + "; ".join(escape(d) for d in c.detail)
            + "</li>"
            for c in bad
        )
        out.append(
            '<div class="warning"><b>Engine snapshots that differ from the replay</b> (a '
            "service restarted from one of them did not stand where the log proves):"
            f"<ul>{items}</ul></div>"
        )
    skipped = checks.not_compared
    if skipped:
        reasons = sorted({d for c in skipped for d in c.detail})
        out.append(
            f"<p class='note'>{_count(len(skipped), 'snapshot')} not compared: "
            + "; ".join(escape(r) for r in reasons)
            + ".</p>"
        )
    return out
