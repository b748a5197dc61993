"""``findings.csv``: a row per alert, in words and figures a spreadsheet reads.

Columns are :data:`FINDINGS_COLUMNS`. Times are in the event's zone with their offset, to
the second; ``end`` is empty while the breach was still in progress when the log ends,
and ``duration_s`` then runs to the log's end. Figures are plain ``key=value; key=value``
text (never JSON), acknowledgements ``by=…; at=…; comment=…`` one after another with
`` | `` between them. Every cell is cleaned of control characters. ``proven_s`` is the
seconds of its measured stretches (the time it is proven for), ``basis`` what it rests on:
``measured``, ``indeterminate``, ``estimate``, ``rounding``, or ``mixed`` (docs/law.md);
``uncertain`` is ``true`` when any stretch of it is indeterminate.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from kent_ops.core import wire
from kent_ops.report.findings import Finding
from kent_ops.report.text import clean

__all__ = ["FINDINGS_COLUMNS", "figure_text", "local_iso", "write_findings_csv"]

FINDINGS_COLUMNS = (
    "id",
    "rule",
    "name",
    "cite",
    "severity",
    "start",
    "end",
    "duration_s",
    "worst_observed",
    "required",
    "uncertain",
    "acknowledged",
    "proven_s",
    "basis",
)


def local_iso(t: datetime, tz: ZoneInfo) -> str:
    """``2027-07-04T10:02:00-04:00``: local, with its offset, to the second."""
    return t.astimezone(tz).replace(microsecond=0).isoformat()


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return clean(str(value))


def figure_text(values: Mapping[str, Any], *, sort: bool = True) -> str:
    """``attendance=2200; nurses_on_duty=4``: a figures dict as plain text, keys sorted."""
    items = sorted(values.items()) if sort else list(values.items())
    return "; ".join(f"{clean(k)}={_value(v)}" for k, v in items)


def _acks(acks: Iterable[wire.Acknowledgement], tz: ZoneInfo) -> str:
    parts = []
    for a in acks:
        at = local_iso(a.at, tz) if a.at is not None else ""
        parts.append(figure_text({"by": a.by, "at": at, "comment": a.comment}, sort=False))
    return " | ".join(parts)


def write_findings_csv(findings: Iterable[Finding], tz: ZoneInfo, path: Path) -> None:
    """``findings.csv``: :data:`FINDINGS_COLUMNS`, a row per alert in id order."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(FINDINGS_COLUMNS)
        for x in findings:
            row = [
                x.id,
                x.rule,
                x.name,
                x.cite,
                x.severity,
                local_iso(x.start, tz),
                local_iso(x.end, tz) if x.end else "",
                str(round(x.duration_s)),
                figure_text(x.worst_observed),
                figure_text(x.required),
                "true" if x.uncertain else "false",
                _acks(x.acknowledged, tz),
                str(round(x.proven_s)),
                x.basis,
            ]
            writer.writerow([clean(cell) for cell in row])
