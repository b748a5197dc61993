"""How an alert reads on every screen: its mark, its heading, its body, its detail.

The terminal's dashboard and the inspector's page in a browser list the same alerts in
the same order (active ones first, breaches before warnings, newest first; then the
ended, then the cleared) and show each one the same way: pure functions of the
alert (and the event's zone) that return tagged text (:mod:`kent_ops.core.tagged`),
which each screen colours in its own way. Everything shown comes from the alert the
aggregator published; nothing is judged here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from kent_ops.core import wire
from kent_ops.core.checklist import BY_ITEM
from kent_ops.core.display import clean, figure_phrase, local_clock
from kent_ops.core.rules import RULES, shown_message
from kent_ops.core.tagged import Line, Span, Tag

__all__ = [
    "SEVERITY_MARK",
    "SEVERITY_RANK",
    "Fact",
    "alert_body",
    "alert_facts",
    "alert_head",
    "alert_history",
    "alert_mark",
    "alert_title",
    "figures_text",
    "is_flashing",
    "ordered_alerts",
    "ordered_items",
    "pending_head",
    "pending_mark",
    "state_word",
]

SEVERITY_RANK = {"breach": 0, "warning": 1, "data": 2}
SEVERITY_MARK: dict[str, tuple[str, Tag]] = {
    "breach": ("● BREACH", "alarm"),
    "warning": ("▲ WARNING", "warn"),
    "data": ("◆ DATA", "data"),
}
"""The word that leads an alert, by severity, and how it reads."""


def is_flashing(alert: wire.Alert) -> bool:
    """A breach still active that nobody has acknowledged flashes (and rang the bell)."""
    return alert.severity == "breach" and alert.state == "active" and not alert.acknowledged


def _order(alert: wire.Alert) -> tuple[int, int, float]:
    """Active first, then ended (still active, no longer holding), then cleared."""
    if alert.state == "active" and alert.ended_at is None:
        group = 0
    elif alert.state == "active":
        group = 1
    else:
        group = 2
    moment = alert.since
    if group == 2:
        moment = alert.cleared_at or alert.since
    stamp = -moment.timestamp() if moment is not None else 0.0
    return (group, SEVERITY_RANK.get(alert.severity, 3), stamp)


def ordered_alerts(alerts: Mapping[str, wire.Alert]) -> list[wire.Alert]:
    """Active first, by severity, newest first within it; then ended; then cleared."""
    return sorted(alerts.values(), key=_order)


def ordered_items(alerts: Mapping[str, wire.Alert]) -> list[tuple[str, wire.Alert]]:
    """The same order, with the id each alert is filed under (its topic's)."""
    return sorted(alerts.items(), key=lambda item: _order(item[1]))


def state_word(alert: wire.Alert) -> tuple[str, Tag]:
    """``active``, ``ended`` (still active, no longer holding) or ``cleared``."""
    if alert.state == "cleared":
        return "cleared", "dim"
    if alert.ended_at is not None:
        return "ended", "caution"
    return "active", "strong"


def _subject(alert: wire.Alert | wire.PendingCondition) -> str:
    return f" [{clean(alert.subject)}]" if alert.subject else ""


def alert_mark(alert: wire.Alert) -> Span:
    """The severity in words (``● BREACH``), dim once the alert is cleared."""
    severity = alert.severity or "data"
    word, tag = SEVERITY_MARK.get(severity, (clean(severity).upper(), "strong"))
    return Span(word, "dim" if alert.state == "cleared" else tag)


def alert_head(alert: wire.Alert, zone: tzinfo) -> Line:
    """Id, rule and subject, citation, since when, its state and who acknowledged it."""
    state, state_tag = state_word(alert)
    cleared = state == "cleared"
    spans = [
        Span(f"{clean(alert.id) or '?'}  ", "strong"),
        Span(clean(alert.rule or "?") + _subject(alert), "dim" if cleared else "strong"),
        Span(f"  {clean(alert.cite)}", "cite"),
        Span(f"  since {local_clock(alert.since, zone)}"),
    ]
    if state != "active":
        spans.append(Span(f"  {state}", state_tag))
    acks = alert.acknowledged
    if acks:
        spans.append(Span(f"  ✓ {clean(acks[-1].by)}", "good"))
        if len(acks) > 1:
            spans.append(Span(f" +{len(acks) - 1}", "good"))
    elif not cleared:
        spans.append(Span("  ✗ not acked", "alarm" if alert.severity == "breach" else "dim"))
    if alert.uncertain:
        spans.append(Span("  uncertain", "caution"))
    return tuple(spans)


def alert_body(alert: wire.Alert) -> str:
    """The message; for a deficient facility, the requirement and what was found.

    The id and citation are on the heading already; what the inspector needs under
    them is which requirement failed, in words, and the note that is the evidence.
    """
    if alert.rule == "facility-deficient" and alert.subject is not None:
        requirement = BY_ITEM.get(alert.subject)
        note = alert.observed.get("note")
        if requirement is not None:
            return clean(requirement.text + (f" — found: “{note}”" if note else ""))
    return clean(shown_message(alert))


def pending_mark() -> Span:
    return Span("… PENDING", "caution-italic")


def pending_head(pending: wire.PendingCondition, zone: tzinfo) -> Line:
    """A condition that holds but not yet for ``pending_s``: not an alert yet."""
    rule = RULES.get(pending.rule)
    return (
        Span(clean(pending.rule or "?") + _subject(pending), "italic"),
        Span(f"  {rule.cite_for(pending.subject) if rule else ''}", "cite"),
        Span(f"  since {local_clock(pending.since, zone)}  not yet raised", "dim"),
    )


def alert_history(
    alert: wire.Alert, notes: Sequence[wire.NoteEntry] = ()
) -> list[tuple[datetime, str]]:
    """What happened to an alert, in order: began, raised, acknowledged, noted, ended, cleared."""
    events: list[tuple[datetime, str]] = []

    def add(moment: datetime | None, what: str) -> None:
        if moment is not None:
            events.append((moment, what))

    add(alert.since, "condition began to hold")
    add(alert.raised_at, "alert raised")
    for ack in alert.acknowledged:
        comment = f": {clean(ack.comment)}" if ack.comment else ""
        add(ack.at, f"acknowledged by {clean(ack.by)}{comment}")
    for note in notes:
        if note.alert == alert.id:
            add(note.at, f"note by {clean(note.by)}: {clean(note.text)}")
    add(alert.ended_at, "condition ended")
    add(alert.cleared_at, "alert cleared")
    events.sort(key=lambda e: e[0])
    return events


def figures_text(values: Mapping[str, Any]) -> str:
    """``occupied 590 · capacity 600 · share 98%``: counts grouped, shares as percentages,
    yes-or-no figures in words (``a gate sensor · silent past its heartbeat``)."""
    if not values:
        return "—"
    return " · ".join(figure_phrase(key, value) for key, value in values.items())


def alert_title(alert: wire.Alert) -> Line:
    """The alert's detail heads with its severity, id, rule and subject, and citation."""
    severity = alert.severity
    mark, tag = SEVERITY_MARK.get(severity, (clean(severity).upper(), "strong"))
    return (
        Span(f"{mark} ", tag),
        Span(f"{clean(alert.id)}  {clean(alert.rule or '?')}{_subject(alert)}", "strong"),
        Span(f"  {clean(alert.cite)}", "cite"),
    )


@dataclass(frozen=True, slots=True)
class Fact:
    """One row of an alert's detail: a label and its lines (``fold``: a hash, which
    breaks anywhere rather than overflow)."""

    label: str
    lines: tuple[Line, ...]
    fold: bool = False


def _fact(label: str, text: str, tag: Tag = "", *, fold: bool = False) -> Fact:
    return Fact(label, ((Span(text, tag),),), fold=fold)


def _stretch_lines(alert: wire.Alert, zone: tzinfo) -> tuple[Line, ...]:
    """Each part of the alert's time with what it rests on: only measured time is proven."""
    lines = []
    for x in alert.stretches:
        until = local_clock(x.end, zone) if x.end is not None else "now"
        rests = f": {'; '.join(clean(r) for r in x.rests_on)}" if x.rests_on else ""
        tag: Tag = "" if x.basis == "measured" else "caution"
        lines.append((Span(f"{local_clock(x.start, zone)}–{until} {x.basis}{rests}", tag),))
    return tuple(lines)


def alert_facts(alert: wire.Alert, zone: tzinfo) -> list[Fact]:
    """Everything about one alert, row by row: its message and rule, the requirement a
    deficient facility failed, its state, the figures observed, required and at worst,
    its times, the evidence record it began at and that record's hash, what its
    stretches rest on when not all measured, and who acknowledged it."""
    facts = [_fact("Message", clean(shown_message(alert)))]
    rule = RULES.get(alert.rule)
    if rule is not None:
        facts.append(_fact("Rule", rule.summary))
    requirement = BY_ITEM.get(alert.subject or "")
    if alert.rule == "facility-deficient" and requirement is not None:
        facts.append(_fact("Requirement", f"{requirement.item}: {requirement.text}"))
    state, state_tag = state_word(alert)
    facts.append(_fact("State", state, state_tag))
    facts.append(_fact("Observed", figures_text(alert.observed)))
    facts.append(_fact("Required", figures_text(alert.required)))
    if alert.worst.observed:
        facts.append(_fact("Worst", figures_text(alert.worst.observed)))
    facts.append(
        _fact(
            "Times",
            f"since {local_clock(alert.since, zone)} · raised "
            f"{local_clock(alert.raised_at, zone)} · ended "
            f"{local_clock(alert.ended_at, zone)} · cleared "
            f"{local_clock(alert.cleared_at, zone)}",
        )
    )
    evidence = alert.evidence
    if evidence.record is not None or evidence.hash is not None:
        facts.append(_fact("Evidence", f"record {evidence.record}"))
        facts.append(_fact("Hash", clean(evidence.hash), fold=True))
    if alert.uncertain:
        why = "; ".join(clean(r) for r in alert.stretches[-1].rests_on) or "a sensor in doubt"
        facts.append(_fact("Uncertain", f"indeterminate now: {why}", "caution"))
    if any(x.basis != "measured" for x in alert.stretches):
        facts.append(Fact("Stretches", _stretch_lines(alert, zone)))
    if alert.acknowledged:
        acks = tuple(
            (Span(f"{clean(a.by)} at {local_clock(a.at, zone)}: {clean(a.comment)}", "good"),)
            for a in alert.acknowledged
        )
        facts.append(Fact("Acknowledged", acks))
    else:
        facts.append(_fact("Acknowledged", "no", "alarm"))
    return facts
