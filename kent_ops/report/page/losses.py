"""What never reached the log: every gap in each sensor's ``seq``, and each broker restart.

Each sensor numbers its messages (docs/protocol.md, "Counting"); a number skipped is a
message the sensor sent that the log never received (a broker killed between its saves,
a connection lost with its queue). A broker that restarted may have lost what it had
acknowledged since its last save. Both are listed whole here; the stretches of findings
that rest on them are indeterminate and listed apart (docs/law.md).
"""

from __future__ import annotations

from collections import Counter
from html import escape

from kent_ops.core.sensor_kinds import kind_of
from kent_ops.core.seq import numbers
from kent_ops.core.timeutil import from_us
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, count, table

__all__ = ["losses_section"]


def _gaps(data: ReportData, fmt: Fmt) -> list[str]:
    engine = data.replay.engine
    counts = engine.counts
    out = ["<h3>Messages never received</h3>"]
    tracks = {s: t for s in counts.sensors if (t := counts.seq_track(s)) is not None and t.gaps}
    if not tracks:
        out.append(
            "<p>No sensor's <code>seq</code> skipped a number: every message each sensor "
            "numbered reached the log.</p>"
        )
        return out
    missing = sum(t.missing for t in tracks.values())
    out.append(
        f"<p>{count(sum(t.gaps for t in tracks.values()), 'gap')} in the sensors' "
        f"<code>seq</code>: {count(missing, 'message')} the sensors sent never reached the "
        "log. A gate's or a lot's next reading measured its figure again (its totals are "
        "cumulative); a staff station's roster was indeterminate from the gap until its "
        "badge reader re-stated it, or the day ended.</p>"
    )
    rows = []
    for gap in engine.gaps:
        live = counts.sensors[gap.sensor]
        device = kind_of(live.kind, live.manual).device_noun
        rows.append(
            f"<tr><td>{escape(device)} {escape(gap.sensor)}</td>"
            f"<td>{escape(numbers(gap.first, gap.last))}</td>"
            f"<td class='num'>{gap.last - gap.first + 1:,}</td>"
            f"<td>{escape(fmt.when(from_us(gap.at)))}</td>"
            f"<td class='num'>{'—' if gap.record is None else f'{gap.record:,}'}</td></tr>"
        )
    out.append(table(["Sensor", "Never received", "Messages", "Found", "Record"], rows, {2, 4}))
    listed = Counter(gap.sensor for gap in engine.gaps)
    for sensor, track in tracks.items():
        more = track.gaps - listed[sensor]
        if more > 0:
            out.append(
                f"<p>… and {count(more, 'more gap')} of {escape(sensor)} (its gaps lost "
                f"{track.missing:,} messages in all).</p>"
            )
    return out


def _broker_restarts(data: ReportData, fmt: Fmt) -> list[str]:
    out = ["<h3>Broker restarts</h3>"]
    restarts = data.collector.broker_restarts
    if not restarts:
        out.append("<p>No restart of the event's broker was recorded.</p>")
        return out
    out.append(
        f"<p>The event's broker restarted {count(len(restarts), 'time')}: what it had "
        "acknowledged to the sensors since its last save may be lost. Every sensor's "
        "figures were indeterminate from then until it was heard again.</p>"
    )
    rows = [
        f"<tr><td>{escape(fmt.stamped(at))}</td><td class='num'>{record:,}</td>"
        f"<td>{escape(said.how)}</td></tr>"
        for at, record, said in restarts
    ]
    out.append(table(["Recorded (receive clock)", "Record", "How it was told"], rows, {1}))
    return out


def losses_section(data: ReportData, fmt: Fmt) -> list[str]:
    """The gaps in every sensor's ``seq``, and each broker restart."""
    return [*_gaps(data, fmt), *_broker_restarts(data, fmt)]
