"""The post-event compliance report, put together: verify, replay, compute, write.

After the event the Town Board needs to know, with evidence, which breaches the record
proves, how long each lasted, what the record could not show, and what the law provides
for them. The
report replays the evidence log through the same engine that ran live (verifying the
hash chain as it reads: a tampered log is refused and nothing is written), takes the
engine's alerts as its findings, checks them against the alerts the live service logged,
and writes to DIR:

``index.html`` (the page), ``findings.csv``, ``timeline.csv``, ``attendance.png``,
``staffing.png``, ``parking.png``, with ``--pdf`` ``report.pdf`` (the page printed by
headless Chromium, :mod:`kent_ops.report.pdf`), and ``manifest.json`` (every file's
SHA-256).

``kent-ops report`` (:mod:`kent_ops.commands.report`) runs it. Exit codes follow the
verdict: 0 for NO BREACH FOUND, 1 for BREACHED or RECORD INCOMPLETE (and for a log that
fails verification: then no report), 2 for bad input (a missing or foreign log, an
invalid permit, ``--pdf`` without Chromium).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from kent_ops import __version__
from kent_ops.core.errors import KentOpsError, UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.precheck import pre_event_findings
from kent_ops.core.timeutil import from_us
from kent_ops.evidence.background import BackgroundVerify
from kent_ops.evidence.log import ChainBroken, EvidenceError, read_meta
from kent_ops.evidence.replay import ReplayResult, last_record_id, record_hashes, replay
from kent_ops.report.cleanup import CleanUp, clean_up_status, not_applicable
from kent_ops.report.collect import Checkpoint, Collector
from kent_ops.report.compare import compare_with_live
from kent_ops.report.csvs import FINDINGS_COLUMNS, write_findings_csv
from kent_ops.report.facts import (
    incomplete_reasons,
    permit_history,
    pre_event_checks,
    property_facts,
)
from kent_ops.report.findings import distinct_breaches, findings_from_alerts, verdict
from kent_ops.report.head import HeadRead, check_head, read_head
from kent_ops.report.model import CheckpointResult, ReportData
from kent_ops.report.pdf import find_chromium, print_pdf
from kent_ops.report.text import clean
from kent_ops.report.timeline import minute_table, write_timeline_csv
from kent_ops.report.watched import unwatched

__all__ = ["FILES", "FINDINGS_COLUMNS", "PDF", "ReportOutcome", "build_report", "write_report"]

PARALLEL_VERIFY_FROM = 200_000
"""From this many records the chain is verified by a second process, side by side."""

FILES = (
    "index.html",
    "findings.csv",
    "timeline.csv",
    "attendance.png",
    "staffing.png",
    "parking.png",
)
"""Every file the manifest lists (the manifest itself is written last)."""
PDF = "report.pdf"
"""Written, and listed in the manifest, with ``--pdf``."""


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """What ``build_report`` wrote and concluded."""

    data: ReportData
    out_dir: Path
    manifest: dict[str, Any]

    @property
    def exit_code(self) -> int:
        """The verdict's: 0 NO BREACH FOUND, 1 BREACHED or RECORD INCOMPLETE."""
        return self.data.verdict.exit_code


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file; --out names the folder the report is written to")
    if not out.exists() and not out.parent.is_dir():
        raise UsageError(f"cannot create {out}: folder {out.parent} does not exist")


def build_report(
    permit_path: str | Path,
    evidence_path: str | Path,
    out_dir: str | Path,
    *,
    progress: Callable[[int], None] | None = None,
    now: datetime | None = None,
    parallel_verify: bool | None = None,
    pdf: bool = False,
) -> ReportOutcome:
    """Verify and replay the log, then write every file of the report to ``out_dir``.

    The chain is verified before anything is written: in the same pass as the replay
    for a small log, or, for a large one (``parallel_verify``; by default from
    :data:`PARALLEL_VERIFY_FROM` records, on a machine with more than one core), by
    the chain walk of ``kent-ops verify`` in a second process while this one replays
    (:class:`~kent_ops.evidence.background.BackgroundVerify`); either way a log
    that fails is refused and no file is written.

    With ``pdf``, the page is also printed to ``report.pdf`` by headless Chromium, which
    must be on PATH (checked first, before the log is read).

    Raises:
        UsageError: an invalid permit, a missing or foreign evidence log, a bad ``out_dir``,
            ``pdf`` without Chromium.
        ChainBroken: the log does not verify; the message names the first bad record and
            nothing has been written.
    """
    permit_path = Path(permit_path)
    evidence_path = Path(evidence_path)
    out = Path(out_dir)
    chromium = find_chromium() if pdf else None
    permit = load_permit(permit_path)
    meta = read_meta(evidence_path)
    if meta.get("event_id") != permit.event_id:
        raise UsageError(
            f"{evidence_path} is the evidence log of event {meta.get('event_id')!r}, "
            f"but the permit {permit_path} is for {permit.event_id!r}"
        )
    _check_out_dir(out)
    head = read_head(evidence_path)  # before the log: a log being written only grows after it
    collector = Collector([p.id for p in permit.properties], permit.max_at_one_time)
    result = _replay_verified(permit, evidence_path, collector, parallel_verify, progress)
    generated_at = now or datetime.now(UTC)
    data = _report_data(
        permit, permit_path, meta, evidence_path, result, collector, generated_at, head
    )
    manifest = write_report(data, out, chromium=chromium)
    return ReportOutcome(data, out, manifest)


def _replay_verified(
    permit: Permit,
    evidence_path: Path,
    collector: Collector,
    parallel_verify: bool | None,
    progress: Callable[[int], None] | None,
) -> ReplayResult:
    """Replay the log into ``collector``, verifying the chain here or beside (see above)."""
    until = last_record_id(evidence_path)
    parallel = (
        parallel_verify if parallel_verify is not None else until >= PARALLEL_VERIFY_FROM
    ) and (os.cpu_count() or 1) > 1
    try:
        if parallel:
            result = _replay_verifying_aside(
                permit, evidence_path, collector, until=until, progress=progress
            )
        else:
            result = replay(
                permit,
                evidence_path,
                on_record=collector,
                on_message=collector.on_message,
                verify=True,
                until=until,
                progress=progress,
            )
    except ChainBroken as exc:
        raise ChainBroken(
            f"refusing to report: {evidence_path} fails verification at record {exc.record}: "
            f"{exc}; no report was written",
            exc.record,
        ) from None
    collector.flush()
    return result


def _report_data(
    permit: Permit,
    permit_path: Path,
    meta: dict[str, str],
    evidence_path: Path,
    result: ReplayResult,
    collector: Collector,
    generated_at: datetime,
    head_read: HeadRead,
) -> ReportData:
    """Everything the report states, worked out from the replay and what it collected."""
    engine = result.engine
    head = check_head(head_read, evidence_path, result.records)
    alerts = engine.alerts
    tz = permit.timezone
    # The hashes findings cite and checkpoints claim, read from the log just verified.
    cited = [a.evidence.record for a in alerts.values() if a.evidence.record is not None]
    stored = record_hashes(evidence_path, [*cited, *(c.record for c in collector.checkpoints)])
    findings = findings_from_alerts(alerts, result.end, stored)
    comparison = compare_with_live(
        alerts, collector.live_alerts, clock=result.clock, log_end=result.end
    )
    last_on = engine.assembly.last_on
    spans = [
        (from_us(a), from_us(b) if b is not None else None)
        for a, b in engine.assembly.spans
        if a is not None
    ]
    clean_up = _clean_up(permit, result, collector, spans)
    frame = minute_table(collector.samples, permit, result.end, engine.doubt.spans)
    pre_event = pre_event_findings(permit)
    status = engine.status()
    last_seen = {s: state.last_seen for s, state in status.sensors.items()}
    unseen = unwatched(
        permit, collector.inspections, clean_up, last_seen, findings, engine.doubt.spans, spans
    )
    ended = from_us(last_on) if last_on is not None and not engine.assembly.on else None
    incomplete = [
        *([head.sentence] if head.incomplete else []),
        *incomplete_reasons(permit, findings, result.end, ended),
    ]
    return ReportData(
        permit=permit,
        permit_path=permit_path,
        permit_sha256=_sha256(permit_path),
        log_permit_sha256=meta.get("permit_sha256"),
        evidence_path=evidence_path,
        replay=result,
        collector=collector,
        findings=findings,
        comparison=comparison,
        clean_up=clean_up,
        distinct=distinct_breaches(findings, tz, result.end),
        verdict=verdict(
            findings,
            clean_up,
            pre_event,
            messages=result.messages,
            incomplete=incomplete,
            not_watched=unseen.words(tz),
        ),
        unwatched=unseen,
        frame=frame,
        adjustments=[
            msgspec.structs.replace(a, by=clean(a.by), reason=clean(a.reason))
            for a in status.adjustments
        ],
        checkpoints=[_check_point(c, stored, result.records) for c in collector.checkpoints],
        pre_event=pre_event,
        pre_event_checks=pre_event_checks(permit),
        properties=property_facts(permit, collector.property_peaks, status.properties),
        permit_history=permit_history(permit, engine),
        assembly_spans=spans,
        incomplete=incomplete,
        generated_at=generated_at,
        version=__version__,
        brief_gaps=engine.alert_book.brief_gaps(),
        doubts=list(engine.doubt.spans),
        head=head,
    )


def _clean_up(
    permit: Permit,
    result: ReplayResult,
    collector: Collector,
    spans: list[tuple[datetime, datetime | None]],
) -> CleanUp:
    """Clean-up against its deadline, counted from when the assembly was last on (permit:F)."""
    if not permit.regulated:
        return not_applicable()
    assembly = result.engine.assembly
    last_on = assembly.last_on
    return clean_up_status(
        permit.timezone,
        from_us(last_on) if last_on is not None else None,
        still_on=assembly.on,
        scheduled_end=permit.last_end,
        inspections=collector.inspections,
        notes=collector.notes,
        log_end=result.end,
        spans=spans,
    )


def _replay_verifying_aside(
    permit: Permit,
    evidence_path: Path,
    collector: Collector,
    *,
    until: int,
    progress: Callable[[int], None] | None,
) -> ReplayResult:
    """Replay here while a second process recomputes the chain on another core.

    Hashing is a third of the work and needs nothing from the replay, so the two run
    side by side (:class:`~kent_ops.evidence.background.BackgroundVerify`, as a
    restarted aggregator does); the replay's result is used only once the verifier says
    OK (it checks at least every record the replay read: a log still being written only
    grows).
    """
    verifier = BackgroundVerify(evidence_path)
    try:
        result = replay(
            permit,
            evidence_path,
            on_record=collector,
            on_message=collector.on_message,
            verify=False,
            until=until,
            progress=progress,
        )
    except BaseException:
        failure = _verifier_failure(verifier)  # a tampered record may be why it failed
        if failure is not None:
            raise failure from None
        raise
    failure = _verifier_failure(verifier)
    if failure is not None:
        raise failure
    return result


def _verifier_failure(verifier: BackgroundVerify) -> KentOpsError | None:
    """Wait for the verification; None if the chain is sound, else the error to raise."""
    result = verifier.wait()
    if result.ok:
        return None
    if result.first_bad is not None:
        return ChainBroken(f"record {result.first_bad}: {result.problem}", result.first_bad)
    return EvidenceError(f"the evidence log could not be verified: {result.problem}")


def _check_point(c: Checkpoint, stored: dict[int, str], count: int) -> CheckpointResult:
    """Whether one checkpoint's claim holds: the record it names has the hash it says."""
    if c.record >= c.record_id or c.record > count:
        return CheckpointResult(c, False, f"names record {c.record}, which it cannot follow")
    digest = stored.get(c.record)
    if digest is None:
        return CheckpointResult(c, False, f"names record {c.record}, which the log lacks")
    if digest != c.hash:
        return CheckpointResult(
            c, False, f"says record {c.record} had hash {c.hash[:16]}…, the chain {digest[:16]}…"
        )
    return CheckpointResult(c, True)


def write_report(data: ReportData, out: Path, *, chromium: str | None = None) -> dict[str, Any]:
    """Write every file (and, given ``chromium``, the PDF), then the manifest of their SHA-256."""
    from kent_ops.report.charts import attendance_chart, parking_chart, staffing_chart
    from kent_ops.report.page import render_page

    out.mkdir(parents=True, exist_ok=True)
    tz = data.permit.timezone
    write_timeline_csv(data.frame, tz, out / "timeline.csv")
    write_findings_csv(data.findings, tz, out / "findings.csv")
    for name, draw in (
        ("attendance.png", attendance_chart),
        ("staffing.png", staffing_chart),
        ("parking.png", parking_chart),
    ):
        draw(data.frame, data.permit, data.findings, data.log_end, out / name)
        data.charts[name] = (out / name).read_bytes()
    (out / "index.html").write_text(render_page(data), encoding="utf-8")
    files = list(FILES)
    if chromium is not None:
        print_pdf(chromium, out / "index.html", out / PDF)
        files.append(PDF)
    manifest = {
        "program": "kent-ops",
        "version": data.version,
        "generated_at": data.generated_at.isoformat(),
        "verdict": data.verdict.word,
        "not_watched": data.verdict.not_watched,
        "files": {name: _sha256(out / name) for name in files},
        "evidence": {
            "file": data.evidence_path.name,
            "records": data.replay.records,
            "head_hash": data.replay.head_hash,
            "verified": data.replay.verified,
            "checkpoints": len(data.checkpoints),
            "checkpoints_matched": sum(1 for c in data.checkpoints if c.matched),
            "head_file": data.head.state if data.head is not None else None,
        },
        "permit": {"file": data.permit_path.name, "sha256": data.permit_sha256},
        "replay_equals_live": data.comparison.equal,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
