"""Everything one report states, gathered in one place before anything is written.

The page, the CSVs and the manifest are all views of a :class:`ReportData`, so they
cannot disagree with each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd

from kent_ops.core import wire
from kent_ops.core.alerts import Brief
from kent_ops.core.doubt import DoubtSpan
from kent_ops.core.permit import Permit
from kent_ops.core.precheck import PreEventFinding
from kent_ops.evidence.replay import ReplayResult
from kent_ops.report.cleanup import CleanUp
from kent_ops.report.collect import Checkpoint, Collector
from kent_ops.report.compare import Comparison
from kent_ops.report.facts import PreEventCheck, PropertyFacts, StatusEntry
from kent_ops.report.findings import DistinctBreach, Finding, Verdict
from kent_ops.report.head import HeadCheck
from kent_ops.report.watched import Unwatched

__all__ = ["CheckpointResult", "ReportData"]


@dataclass(frozen=True, slots=True)
class CheckpointResult:
    """One checkpoint the log holds, checked against the verified chain."""

    checkpoint: Checkpoint
    matched: bool
    problem: str | None = None


@dataclass(slots=True)
class ReportData:
    """The facts of one post-event report."""

    permit: Permit
    permit_path: Path
    permit_sha256: str
    log_permit_sha256: str | None
    evidence_path: Path
    replay: ReplayResult
    collector: Collector
    findings: list[Finding]
    comparison: Comparison
    clean_up: CleanUp
    distinct: list[DistinctBreach]
    verdict: Verdict
    unwatched: Unwatched
    """What the record does not show was watched (the verdict's "not watched")."""
    frame: pd.DataFrame
    adjustments: list[wire.Adjustment]
    checkpoints: list[CheckpointResult]
    pre_event: list[PreEventFinding]
    pre_event_checks: list[PreEventCheck]
    properties: list[PropertyFacts]
    permit_history: list[StatusEntry]
    assembly_spans: list[tuple[datetime, datetime | None]]
    incomplete: list[str]
    """Why the record may not show the whole assembly (empty when it does)."""
    generated_at: datetime
    version: str
    charts: dict[str, bytes] = field(default_factory=dict)
    brief_gaps: list[Brief] = field(default_factory=list)
    """Staffing shortfalls over 500 that ended before they became findings."""
    doubts: list[DoubtSpan] = field(default_factory=list)
    """Each stretch in which a figure rested on a sensor in doubt, or on a clamp at 0."""
    head: HeadCheck | None = None
    """The log against its head file (None: not checked, e.g. a report built in a test)."""

    @property
    def log_end(self) -> datetime | None:
        return self.replay.end
