"""The data quality section's list of rejected messages kept in part or counted."""

from __future__ import annotations

from html import escape

from kent_ops.report.kept import Kept
from kent_ops.report.page.fmt import Fmt, count, table

__all__ = ["kept_section"]


def kept_section(kept: Kept, fmt: Fmt) -> list[str]:
    """Each oversized payload with its size and hash; each source's counted messages."""
    out: list[str] = []
    if kept.excerpts_total:
        rows = [
            f"<tr><td class='num'>{k.record:,}</td><td>{fmt.cell(k.at)}</td>"
            f"<td><code>{escape(k.topic)}</code></td><td class='num'>{k.size:,}</td>"
            f"<td><code>{escape(k.sha256)}</code></td></tr>"
            for k in kept.excerpts
        ]
        out.append(
            f"<p>{count(kept.excerpts_total, 'rejected payload')} over 64 KiB: the log keeps "
            "each one's size, SHA-256 and first 1,024 bytes, not the payload itself.</p>"
        )
        out.append(table(["Record", "Received", "Topic", "Bytes", "SHA-256"], rows, {0, 3}))
        out += _more(kept.excerpts_total, len(kept.excerpts))
    if kept.counted_records:
        rows = [
            f"<tr><td class='num'>{c.record:,}</td><td>{escape(c.source)}</td>"
            f"<td>{fmt.cell(c.first_at)}<br>{fmt.cell(c.last_at)}</td>"
            f"<td class='num'>{c.messages:,}</td><td class='num'>{c.size:,}</td>"
            f"<td><code>{escape(c.sha256)}</code></td></tr>"
            for c in kept.counted
        ]
        out.append(
            f"<p>{count(kept.counted_messages, 'rejected message')} from sources over their "
            "budget for rejected records were counted, not stored: each record gives their "
            "number, total size and the SHA-256 over the SHA-256 of each, in order.</p>"
        )
        out.append(
            table(
                ["Record", "Source", "First / last", "Messages", "Bytes", "SHA-256"],
                rows,
                {0, 3, 4},
            )
        )
        out += _more(kept.counted_records, len(kept.counted))
    return out


def _more(total: int, listed: int) -> list[str]:
    if total <= listed:
        return []
    return [f"<p>The first {listed:,} of {total:,} are listed; the log holds them all.</p>"]
