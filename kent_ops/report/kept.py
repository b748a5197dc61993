"""Rejected messages the log holds only the proof of: kept in part, or counted.

A payload over 64 KiB is stored in part (its first bytes, its size and SHA-256 in the
reason), and a source over its budget for rejected records has the rest counted in
``flood-summary`` system records (docs/protocol.md, "The evidence log"). The report
lists each, so a reader can ask the sender for the payload and check it by its hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from kent_ops.evidence.records import Excerpt
from kent_ops.evidence.replay import Replayed
from kent_ops.evidence.system import FloodSummary
from kent_ops.report.text import clean

__all__ = ["Counted", "HeldMessage", "Kept", "KeptInPart"]

LISTED = 200
"""Rows each table lists; the rest are counted (a flood must not make the page huge)."""


@dataclass(frozen=True, slots=True)
class HeldMessage:
    """A message as the report lists it back to the log: the record that holds it (or
    the proof of it), when it came, its topic, and its size and SHA-256, which whoever
    holds the bytes can check them by."""

    record: int
    at: datetime
    topic: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class KeptInPart(HeldMessage):
    """One message kept in part: an oversized payload the log keeps the proof of."""


@dataclass(frozen=True, slots=True)
class Counted:
    """One ``flood-summary`` record: a source's rejected messages counted, not stored."""

    record: int
    source: str
    first_at: datetime
    last_at: datetime
    messages: int
    size: int
    sha256: str


@dataclass(slots=True)
class Kept:
    """What the replay found of both kinds; the first :data:`LISTED` of each are kept."""

    excerpts: list[KeptInPart] = field(default_factory=list)
    excerpts_total: int = 0
    counted: list[Counted] = field(default_factory=list)
    counted_records: int = 0
    counted_messages: int = 0

    def excerpt(self, rec: Replayed) -> None:
        """A rejected message: listed if the log keeps it in part."""
        found = Excerpt.parse(rec.payload, rec.reason)
        if found is None:
            return
        self.excerpts_total += 1
        if len(self.excerpts) >= LISTED:
            return
        topic = clean(rec.topic or "")
        self.excerpts.append(
            KeptInPart(rec.id, rec.received_at, topic, found.size, clean(found.sha256))
        )

    def summary(self, rec: Replayed, summary: FloodSummary) -> None:
        """A ``flood-summary`` record: listed (one without its times is passed over)."""
        try:
            first_at = datetime.fromisoformat(summary.first_at)
            last_at = datetime.fromisoformat(summary.last_at)
        except ValueError:
            return
        row = Counted(
            rec.id,
            clean(summary.source),
            first_at,
            last_at,
            summary.messages,
            summary.size,
            clean(summary.sha256),
        )
        self.counted_records += 1
        self.counted_messages += row.messages
        if len(self.counted) < LISTED:
            self.counted.append(row)
