"""Data quality and the evidence log (sections 8 and 9): how far the figures can be trusted.

Sensor outages, the figures in doubt, the lots against the gates, messages never received
and broker restarts, rejected messages, counter restarts, attendance adjustments, the
service's own runs, whether the replay equals what was published live, and the log's
verification with its checkpoints.
"""

from __future__ import annotations

from html import escape

from kent_ops.core import wire
from kent_ops.report.collect import Reasons
from kent_ops.report.model import ReportData
from kent_ops.report.page.cross_check import cross_check_section
from kent_ops.report.page.devices import rented_devices
from kent_ops.report.page.fmt import Fmt, count, duration, figures, table
from kent_ops.report.page.kept import kept_section
from kent_ops.report.page.losses import losses_section
from kent_ops.report.page.record import doubt_section
from kent_ops.report.snapshots import snapshot_section

__all__ = ["data_quality", "evidence"]


def _outages(data: ReportData, fmt: Fmt) -> list[str]:
    out = ["<h3>Sensor outages</h3>"]
    outages = [f for f in data.findings if f.rule == "sensor-offline"]
    if not outages:
        out.append("<p>No sensor was offline or silent long enough to raise an alert.</p>")
        return out
    rows = [
        f"<tr><td>{escape(f.subject or '')}</td>"
        f"<td>{escape(fmt.when(f.start))}</td>"
        f"<td>{escape(fmt.when(f.end) if f.end else 'still out at the end')}</td>"
        f"<td class='num'>{escape(duration(f.duration_s))}</td>"
        f"<td>{figures(f.worst_observed)}</td></tr>"
        for f in outages
    ]
    out.append(table(["Sensor", "From", "Until", "Duration", "Seen"], rows, {3}))
    return out


def _by_count(groups: dict[str, Reasons]) -> list[tuple[str, Reasons]]:
    return sorted(groups.items(), key=lambda kv: -kv[1].count)


def _rejected(data: ReportData, fmt: Fmt) -> list[str]:
    """Rejected messages by reason; then the accepted ones that changed nothing."""
    c = data.collector
    out = ["<h3>Rejected messages</h3>"]
    if c.rejected:
        rows = [
            f"<tr><td>{escape(reason)}</td><td class='num'>{g.count:,}</td>"
            f"<td><code>{escape(g.topic)}</code><br>{escape(g.example)}</td>"
            f"<td>{escape(fmt.stamped(g.first_at))}<br>{escape(fmt.stamped(g.last_at))}</td></tr>"
            for reason, g in _by_count(c.rejected)
        ]
        out.append(
            f"<p>{count(c.rejected_total, 'message')} rejected: each is stored in the log "
            "with its reason and changed no figure. First and last are when they were "
            f"received ({RECEIVE_CLOCK}).</p>"
        )
        out.append(table(["Reason", "Messages", "Example", "First / last received"], rows, {1}))
    else:
        out.append("<p>No message was rejected.</p>")
    out += kept_section(c.kept, fmt)
    if c.repeats:
        total = sum(g.count for g in c.repeats.values())
        rows = [
            f"<tr><td>{escape(reason)}</td><td class='num'>{g.count:,}</td>"
            f"<td>{escape(g.example)}</td></tr>"
            for reason, g in _by_count(c.repeats)
        ]
        out.append(
            f"<p>{count(total, 'accepted message')} changed nothing or were noted (repeats "
            "redelivered by the broker, restarts):</p>"
        )
        out.append(table(["Note", "Messages", "Example"], rows, {1}))
    return out


def _restarts(data: ReportData, fmt: Fmt) -> list[str]:
    out = ["<h3>Counter restarts</h3>"]
    resets = [f for f in data.findings if f.rule == "counter-reset"]
    if not resets:
        out.append("<p>No gate counter restarted.</p>")
        return out
    rows = [
        f"<tr><td>{escape(f.subject or '')}</td>"
        f"<td>{escape(fmt.when(f.start))}</td>"
        f"<td>{escape(f.message)}</td></tr>"
        for f in resets
    ]
    out.append(table(["Gate", "At", "What happened"], rows))
    return out


def _adjustments(data: ReportData, fmt: Fmt) -> list[str]:
    out = ["<h3>Attendance adjustments</h3>"]
    if not data.adjustments:
        out.append("<p>No inspector adjusted the attendance.</p>")
        return out
    made = data.collector.adjustments_made
    rows = [
        f"<tr><td>{escape(fmt.action(made.get((a.by, a.at)), a.at) if a.at else '—')}"
        f"</td><td>{escape(a.by)}</td>"
        f"<td class='num'>{a.attendance:,}</td>"
        f"<td class='num'>{a.offset:+,}</td>"
        f"<td>{escape(a.reason)}</td></tr>"
        for a in data.adjustments
    ]
    out.append(table(["Made (recorded)", "Inspector", "Set to", "Offset", "Why"], rows, {2, 3}))
    return out


def _service(data: ReportData) -> list[str]:
    """The clock, the service's runs and outages, and anything that makes the replay suspect."""
    r = data.replay
    events = data.collector.service_events
    clock = (
        "times are when messages were received"
        if r.clock == "wall"
        else "times are the sensors' own timestamps"
    )
    lines = [
        f"clock: <b>{escape(r.clock)}</b> ({clock})",
        f"runs of the service: {events['started']}; broker disconnections: "
        f"{events['broker-disconnected']}; storage errors: {events['storage-error']}",
    ]
    trust = [
        ("broker-session-lost", "the broker had lost the aggregator's session"),
        ("broker-session-contested", "another client kept taking the aggregator's session"),
        ("broker-restarted", "the event's broker restarted (see Broker restarts)"),
        ("rollback-found", "the log was found behind a checkpoint it had published"),
        ("rollback-accepted", "the operator went on with a log behind its checkpoint"),
        ("clock-jump", "the host clock jumped (receive times kept the steady clock)"),
    ]
    for event, words in trust:
        if events[event]:
            lines.append(f"<b>{words}</b> ({events[event]} time{'s' if events[event] > 1 else ''})")
    if events["permit-changed"]:
        lines.append(
            f"the permit file changed while the log was kept ({events['permit-changed']} times)"
        )
    if data.log_permit_sha256 and data.log_permit_sha256 != data.permit_sha256:
        lines.append(
            "<b>the permit file given to this report differs from the one the log was opened "
            "with</b> (SHA-256 " + escape(data.log_permit_sha256[:16]) + "… in the log)"
        )
    if r.disagreements:
        lines.append(
            f"<b>{r.disagreements:,} messages were accepted or rejected differently on replay "
            "than live</b>"
        )
    return [
        "<h3>The service</h3>",
        "<ul>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>",
    ]


def _head(data: ReportData) -> list[str]:
    """Whether the log ends where its head file says: a cut tail or a lost ``-wal`` shows here."""
    head = data.head
    if head is None:
        return []
    words = escape(head.sentence[:1].upper() + head.sentence[1:]) + "."
    if head.incomplete:
        words = (
            f'<div class="warning"><b>{words}</b> The report covers only the records the log '
            "holds; anything recorded after them is not in it.</div>"
        )
    else:
        words = f"<p>{words}</p>"
    return ["<h3>The log's end</h3>", words]


def _replay_against_live(data: ReportData) -> list[str]:
    cmp = data.comparison
    out = ["<h3>Replay against the live alerts</h3>"]
    if cmp.equal:
        out.append(
            f"<p>The {cmp.replay_count} replayed alerts equal the {cmp.live_count} the live "
            "service logged and published (id, rule, subject, since, raised, ended, cleared "
            "and state).</p>"
        )
    else:
        out.append(
            '<div class="warning"><b>The replay differs from what was published live:</b><ul>'
            + "".join(f"<li>{escape(p)}</li>" for p in cmp.problems)
            + "</ul></div>"
        )
    out.extend(f'<p class="note">{escape(note)}</p>' for note in cmp.notes)
    return out


def data_quality(data: ReportData, fmt: Fmt) -> str:
    """The data quality section: everything that bears on how far the figures can be trusted."""
    out = [
        *_outages(data, fmt),
        *losses_section(data, fmt),
        *doubt_section(data, fmt),
        *cross_check_section(data, fmt),
        *_rejected(data, fmt),
        *rented_devices(data.collector.devices, fmt),
        *_restarts(data, fmt),
        *_adjustments(data, fmt),
        *_service(data),
        *_head(data),
        *_replay_against_live(data),
        *snapshot_section(data.collector.snapshots, fmt.when),
    ]
    return "\n".join(out)


RECEIVE_CLOCK = "the aggregator's receive clock"
"""The clock every record's receive time is on: the machine's that ran the aggregator."""


def _engine_clock(clock: str) -> str:
    if clock == "sensor":
        return "the engine's clock: the sensors' own timestamps"
    return "the engine's clock: the receive clock"


def evidence(data: ReportData, fmt: Fmt) -> str:
    """The evidence log section: the log, its verification and the checkpoints published from it."""
    r = data.replay
    cps = data.checkpoints
    matched = sum(1 for c in cps if c.matched)
    rows = [
        ("File", f"<code>{escape(data.evidence_path.name)}</code>"),
        ("Records", f"{r.records:,} ({r.messages:,} messages received)"),
        ("Head hash", f"<span class='hash'>{escape(r.head_hash)}</span>"),
        (
            "Verification",
            "the whole hash chain was recomputed record by record and matches"
            if r.verified
            else "not verified",
        ),
        ("First record received", f"{escape(fmt.stamped(r.first_time))} ({RECEIVE_CLOCK})"),
        ("Last record received", f"{escape(fmt.stamped(r.last_time))} ({RECEIVE_CLOCK})"),
        ("Log ends", f"{escape(fmt.stamped(r.end))} ({escape(_engine_clock(r.clock))})"),
        (
            "Checkpoints",
            f"{matched} of {len(cps)} checkpoints the service published match the chain",
        ),
        *([("Head file", escape(data.head.sentence))] if data.head is not None else []),
        ("Permit file SHA-256", f"<span class='hash'>{escape(data.permit_sha256)}</span>"),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    out = [f'<table class="facts"><tbody>{body}</tbody></table>']
    if r.clock == "sensor":
        out.append(
            "<p class='muted'>Two clocks: the log keeps when each record was received, on the "
            "clock of the machine that ran the aggregator (a rehearsal or a replay may run on "
            "another day); the findings, charts and times above run on the engine's clock, "
            "the sensors' own timestamps. Each time here carries its offset from UTC.</p>"
        )
    bad = [c for c in cps if not c.matched]
    if bad:
        out.append(
            '<div class="warning"><b>Checkpoints that do not match:</b><ul>'
            + "".join(
                f"<li>record {c.checkpoint.record_id}: {escape(c.problem or '')}</li>" for c in bad
            )
            + "</ul></div>"
        )
    if cps:
        last = cps[-1].checkpoint
        out.append(
            f"<p class='muted'>Anyone who kept a checkpoint published on "
            f"<code>{escape(wire.Topics(data.permit.event_id).checkpoint)}</code> can compare "
            f"it with this chain. The last in the log: record {last.record:,}, hash "
            f"<span class='hash'>{escape(last.hash)}</span>, received "
            f"{escape(fmt.stamped(last.at))} ({RECEIVE_CLOCK}).</p>"
        )
    return "\n".join(out)
