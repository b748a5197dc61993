"""``kent-ops report --permit P --evidence E --out DIR [--pdf]``: the post-event report's command.

The report itself is :func:`kent_ops.report.build.build_report`; this module is the
terminal around it: a progress bar while a long log is read (only on a terminal), the
warnings a clerk must see on stderr, and a short summary on stdout whose last line is
the verdict (``BREACHED: …``, ``NO BREACH FOUND: …; not watched: …`` or ``RECORD
INCOMPLETE: …; not watched: …``). ``--pdf`` also prints the page to ``report.pdf`` with
headless Chromium. Exit codes follow the verdict: 0 NO BREACH FOUND, 1 BREACHED or
RECORD INCOMPLETE (a log behind its head file is incomplete: committed records are
missing), 1 for a log that fails verification (then no report), 2 bad input (or
``--pdf`` with no ``chromium`` on PATH).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kent_ops.core.errors import UsageError
from kent_ops.evidence.replay import last_record_id
from kent_ops.report.build import ReportOutcome, build_report
from kent_ops.report.findings import plural, proven_breaches

__all__ = ["cli_report"]

WARNINGS_SHOWN = 5
"""Differences from the live alerts named on stderr; the page lists every one."""


@contextmanager
def _progress_bar(total: int) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr while the log is read, only on a terminal."""
    if not sys.stderr.isatty() or total <= 0:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("verifying and replaying"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("records"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("replay", total=total)
        yield lambda done: bar.update(task, completed=done)


def _record_total(evidence: Path) -> int:
    try:
        return last_record_id(evidence)
    except UsageError:
        return 0


def _warn(outcome: ReportOutcome, permit: str) -> None:
    """What the clerk running the report must not miss, one line each on stderr."""
    data = outcome.data
    problems = data.comparison.problems
    if not data.comparison.equal:
        sys.stderr.write(
            "kent-ops: warning: the replayed findings differ from the alerts published live: "
            + "; ".join(problems[:WARNINGS_SHOWN])
            + (" …" if len(problems) > WARNINGS_SHOWN else "")
            + "\n"
        )
    if data.head is not None and data.head.incomplete:
        sys.stderr.write(
            f"kent-ops: warning: {data.head.sentence}; the report covers only the records "
            "the log holds\n"
        )
    if data.log_permit_sha256 and data.log_permit_sha256 != data.permit_sha256:
        sys.stderr.write(
            f"kent-ops: warning: {permit} is not the permit file the evidence log was "
            "opened with (its SHA-256 differs); the report applies the file given\n"
        )


def cli_report(args: argparse.Namespace) -> int:
    """Write the report to ``--out``; print the verdict last; exit with the verdict's code."""
    evidence = Path(args.evidence)
    total = _record_total(evidence) if sys.stderr.isatty() else 0
    with _progress_bar(total) as progress:
        outcome = build_report(
            args.permit, evidence, args.out, progress=progress, pdf=getattr(args, "pdf", False)
        )
    _warn(outcome, args.permit)
    data = outcome.data
    breaches = sum(1 for f in data.findings if f.is_breach)
    proven = len(proven_breaches(data.findings))
    written = f"{outcome.out_dir}/index.html"
    if "report.pdf" in outcome.manifest["files"]:
        written += f" and {outcome.out_dir}/report.pdf"
    incomplete = "; the record is incomplete" if data.incomplete else ""
    sys.stdout.write(
        f"report written to {written}\n"
        f"{plural(len(data.findings), 'finding')} ({plural(breaches, 'breach finding')}, "
        f"{proven} proven), clean-up {data.clean_up.word}; "
        f"{data.replay.records:,} records verified, head {data.replay.head_hash[:16]}…"
        f"{incomplete}\n"
        f"{data.verdict.line}\n"
    )
    return outcome.exit_code
