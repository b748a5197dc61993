"""The log's head file, checked by the report: a log cut short must not read as complete.

The aggregator keeps the last committed record and its hash beside the log
(``evidence.sqlite.head``, :mod:`kent_ops.evidence.claims`). A log with fewer records
than it names, or another hash there, lost committed records from its end (a cut tail,
a ``-wal`` file lost after a crash): the report still reports what the log holds, but
says so in the verdict (the record is incomplete), in the notice above it and under
data quality, and exits 1. A log with no head file beside it is said under data
quality only: a copy handed over alone is not evidence of a cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kent_ops.evidence.claims import (
    OutsideClaim,
    contradictions,
    head_path,
    read_head_file,
)
from kent_ops.evidence.records import EvidenceError
from kent_ops.evidence.replay import record_hashes

__all__ = ["HeadCheck", "check_head", "read_head"]


@dataclass(frozen=True, slots=True)
class HeadRead:
    """The head file as read before the replay (a live log only grows after it)."""

    path: Path
    claim: OutsideClaim | None
    unreadable: str | None = None


@dataclass(frozen=True, slots=True)
class HeadCheck:
    """What the head file says of the log: ``agrees``, ``missing``, ``unreadable`` or
    ``contradicted``, in one sentence for the page."""

    state: str
    sentence: str

    @property
    def incomplete(self) -> bool:
        """The log lacks committed records, or nothing can say whether it does."""
        return self.state in ("contradicted", "unreadable")


def read_head(evidence: Path) -> HeadRead:
    """Read the head file beside ``evidence`` now, before the log is read."""
    try:
        return HeadRead(head_path(evidence), read_head_file(evidence))
    except EvidenceError as exc:
        return HeadRead(head_path(evidence), None, str(exc))


def check_head(read: HeadRead, evidence: Path, records: int) -> HeadCheck:
    """The verified log of ``records`` records against its head file as read before."""
    if read.unreadable is not None:
        return HeadCheck("unreadable", f"{read.unreadable}, so nothing shows the log is whole")
    claim = read.claim
    if claim is None:
        return HeadCheck(
            "missing",
            f"there is no head file beside the log ({read.path.name}), so nothing here "
            "shows whether records were cut from its end",
        )
    found = contradictions(records, record_hashes(evidence, [claim.record]), [claim])
    if found:
        return HeadCheck(
            "contradicted", f"{found[0].sentence}: committed records are missing from the log"
        )
    return HeadCheck(
        "agrees",
        f"its head file ({read.path.name}) names record {claim.record:,}, which the log "
        "holds with the same hash",
    )
