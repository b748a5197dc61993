"""The gate view's panels: the core's gate view (:mod:`kent_ops.core.gate_view`) in Rich text.

What a gate view shows is decided once, in the core, for this app and for the deputy's
page in a browser (``kent-ops serve``); here each of its tagged spans only gets its
Rich style. Pure functions: they are tested without a screen.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rich.text import Text

from dashboards.common.tagged_text import line_text
from dashboards.gate.tally import TallyState
from kent_ops.core import wire
from kent_ops.core.gate_view import (
    GateOrder,
    Line,
    TallyFacts,
    counts_line,
    gate_order,
    header_line,
    order_lines,
    tally_lines,
)

__all__ = [
    "GateOrder",
    "counts_text",
    "gate_order",
    "header_text",
    "lines_text",
    "order_details",
    "tally_facts",
    "tally_text",
]


def lines_text(lines: Iterable[Line], text: Text | None = None) -> Text:
    """The view's lines in one Text, one line each, each span in its tag's Rich style
    (:mod:`dashboards.common.tagged_text`; the page has its CSS classes)."""
    out = text if text is not None else Text()
    for number, line in enumerate(lines):
        if number:
            out.append("\n")
        line_text(line, out)
    return out


def order_details(order: GateOrder) -> Text:
    """Attendance against ``hold_at`` (marked within 10% of it and past it) and the reason."""
    return lines_text(order_lines(order), Text(justify="center"))


def counts_text(status: wire.Status | None, gate: str) -> Text:
    """This gate's counter as the aggregator has it: in, out, net, rate, online."""
    return lines_text([counts_line(status, gate)], Text(no_wrap=True, overflow="ellipsis"))


def header_text(gate: str, event_id: str, status: wire.Status | None, now: datetime | None) -> Text:
    """The event's local time, the gate and the event."""
    line = header_line(gate, event_id, status, now)
    return lines_text([line], Text(no_wrap=True, overflow="ellipsis"))


def tally_facts(
    state: TallyState,
    *,
    sent: int | None,
    waiting_s: float | None = None,
    unheard: bool = False,
) -> TallyFacts:
    """What the core's view needs of this app's tally."""
    return TallyFacts(
        state.in_total, state.out_total, sent=sent, waiting_s=waiting_s, unheard=unheard
    )


def tally_text(
    state: TallyState,
    status: wire.Status | None,
    gate: str,
    *,
    sent: int | None,
    waiting_s: float | None = None,
    unheard: bool = False,
) -> Text:
    """The manual tally: what this tablet counted, whether the aggregator counted it
    (the broker having it is only *sent*), what the aggregator shows for it, and a
    warning when the permit does not list it."""
    facts = tally_facts(state, sent=sent, waiting_s=waiting_s, unheard=unheard)
    return lines_text(tally_lines(facts, status, gate))
