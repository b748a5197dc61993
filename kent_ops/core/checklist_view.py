"""The facilities checklist as an inspector sees it, on any screen: pure functions of the
status (and the alerts).

Which items apply comes from the aggregator's status (``checklist_items``: item,
paragraph, text, cite, in the ordinance's order) and each item's latest marking from
its ``checklist`` (result, by, at, note): a screen has no permit of its own. Nothing
here decides anything: an item is deficient because the aggregator says so, and its
``facility-deficient`` alert is the one the aggregator published (permit:C, D and F;
docs/protocol.md, "inspection"). The terminal's checklist screen and the inspector's
page both draw these groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from kent_ops.core import wire
from kent_ops.core.display import clean, event_zone, local_clock
from kent_ops.core.tagged import Line, Span, Tag

__all__ = [
    "RESULT_MARK",
    "ChecklistGroup",
    "ChecklistRow",
    "applicable_items",
    "checklist_counts",
    "checklist_groups",
    "checklist_summary",
    "deficiency_alert",
    "deficiency_line",
    "marked_by",
    "result_mark",
]

RESULT_MARK: dict[str | None, tuple[str, Tag]] = {
    None: ("· unmarked", "dim"),
    "ok": ("✓ ok", "good-strong"),
    "deficient": ("✗ DEFICIENT", "alarm"),
    "n/a": ("– n/a", "cite"),
}
"""How each state reads in the list: the verdict first, so a narrow screen keeps it."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def applicable_items(status: wire.Status | None) -> list[wire.ChecklistItemInfo]:
    """The items that apply to this permit, as the aggregator lists them; [] until known."""
    return list(status.checklist_items) if status is not None else []


def _marks(status: wire.Status | None) -> Mapping[str, wire.ChecklistMark]:
    return status.checklist if status is not None else {}


def result_mark(result: str | None) -> Span:
    """``✓ ok``, ``✗ DEFICIENT``, ``– n/a`` or ``· unmarked``, as it reads."""
    words, tag = RESULT_MARK.get(result, (clean(result), "strong"))
    return Span(words, tag)


def checklist_counts(status: wire.Status | None) -> dict[str | None, int]:
    """How many applicable items stand at each result (None: not marked yet)."""
    marks = _marks(status)
    counts: dict[str | None, int] = {None: 0, "ok": 0, "deficient": 0, "n/a": 0}
    for it in applicable_items(status):
        mark = marks.get(it.item)
        result = mark.result if mark is not None else None
        counts[result if result in counts else None] += 1
    return counts


def checklist_summary(status: wire.Status | None) -> str:
    """``Checklist: 20 items · 3 ok · 1 deficient · 0 n/a · 16 unmarked``."""
    items = applicable_items(status)
    if not items:
        return "Checklist"
    c = checklist_counts(status)
    return (
        f"Checklist: {len(items)} items · {c['ok']} ok · {c['deficient']} deficient · "
        f"{c['n/a']} n/a · {c[None]} unmarked"
    )


def deficiency_alert(item: str, alerts: Mapping[str, wire.Alert]) -> wire.Alert | None:
    """The newest ``facility-deficient`` alert about ``item`` that is not cleared yet."""
    found = [
        a
        for a in alerts.values()
        if a.rule == "facility-deficient" and a.subject == item and a.state == "active"
    ]
    if not found:
        return None
    return max(found, key=lambda a: a.since or _EPOCH)


def deficiency_line(alert: wire.Alert, zone: tzinfo) -> Line:
    """The breach a deficient item holds: its id, citation, since when, and until when."""
    spans = [
        Span(f"{clean(alert.id)} facility-deficient", "alarm"),
        Span(f"  {clean(alert.cite)}", "cite"),
        Span(f"  since {local_clock(alert.since, zone)}"),
    ]
    if alert.ended_at is not None:
        spans.append(Span(f"  ended {local_clock(alert.ended_at, zone)}", "caution"))
    else:
        spans.append(Span("  breach held until it is marked ok or n/a", "dim"))
    return tuple(spans)


def marked_by(mark: wire.ChecklistMark, zone: tzinfo) -> str:
    """Who marked it and when: ``insp-1 14:03:05``."""
    return f"{clean(mark.by) or '?'} {local_clock(mark.at, zone)}"


@dataclass(frozen=True, slots=True)
class ChecklistRow:
    """One item with its latest marking."""

    item: str
    text: str
    cite: str
    result: str | None
    """``ok``, ``deficient``, ``n/a``, or None while it is not marked."""
    mark: Span
    who: str
    """Who marked it and when; '' while it is not marked."""
    note: Span | None
    """What the inspector wrote (red for a deficiency)."""


@dataclass(frozen=True, slots=True)
class ChecklistGroup:
    """A paragraph of the ordinance (``C(1) Drinking water``) and its items."""

    paragraph: str
    deficient: int
    items: tuple[ChecklistRow, ...]


def _row(it: wire.ChecklistItemInfo, mark: wire.ChecklistMark | None, zone: tzinfo) -> ChecklistRow:
    result = mark.result if mark is not None else None
    note = None
    if mark is not None and mark.note:
        note = Span(f"“{clean(mark.note)}”", "alarm-soft" if result == "deficient" else "italic")
    return ChecklistRow(
        item=clean(it.item),
        text=clean(it.text),
        cite=clean(it.cite),
        result=result,
        mark=result_mark(result),
        who=marked_by(mark, zone) if mark is not None else "",
        note=note,
    )


def checklist_groups(status: wire.Status | None) -> list[ChecklistGroup]:
    """The items that apply, grouped by paragraph in the ordinance's order, each once."""
    zone = event_zone(status)
    marks = _marks(status)
    groups: dict[str, list[wire.ChecklistItemInfo]] = {}
    seen: set[str] = set()
    for it in applicable_items(status):
        if it.item in seen or it.item.startswith("group:"):
            continue  # each item once, and never mistaken for a heading
        seen.add(it.item)
        groups.setdefault(it.paragraph or it.item, []).append(it)
    out = []
    for paragraph, items in groups.items():
        rows = tuple(_row(it, marks.get(it.item), zone) for it in items)
        deficient = sum(1 for row in rows if row.result == "deficient")
        out.append(ChecklistGroup(clean(paragraph), deficient, rows))
    return out
