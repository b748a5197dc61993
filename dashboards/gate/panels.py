"""The gate view's panels: pure functions of the gate's command, the status and the tally.

The order comes from this gate's command (the aggregator's word for this gate,
docs/protocol.md); until one arrives the status's ``admit`` is shown, marked as such.
Nothing here decides to admit or hold: that is the aggregator's rule (hold at
``hold_at``, set from the permitted maximum at one time, permit:B(2); and at 500 or
more while there is no issued permit, permit:A).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text

from dashboards.common.format import clean, event_zone, fmt_age, fmt_int, level, local_clock
from dashboards.gate.tally import TallyState, manual_gate
from kent_ops.core import wire

__all__ = [
    "GateOrder",
    "counts_text",
    "gate_order",
    "order_details",
    "tally_text",
]


@dataclass(frozen=True, slots=True)
class GateOrder:
    """What the deputy is told to do, and the figures behind it."""

    admit: bool | None
    attendance: int | None = None
    hold_at: int | None = None
    resume_below: int | None = None
    reason: str = ""
    source: Literal["command", "status", "none"] = "none"

    @property
    def word(self) -> str:
        if self.admit is None:
            return "NO ORDER"
        return "ADMIT" if self.admit else "HOLD"


def gate_order(command: wire.GateCommand | None, status: wire.Status | None) -> GateOrder:
    """The order for this gate: its command if there is one, else the status's ``admit``.

    The attendance shown is the status's, which is republished on every change; a
    command is republished only when the order changes, so its figure ages.
    """
    current = status.attendance.current if status is not None else None
    if command is not None:
        return GateOrder(
            admit=command.admit,
            attendance=current if current is not None else command.attendance,
            hold_at=command.hold_at,
            resume_below=command.resume_below,
            reason=clean(command.reason),
            source="command",
        )
    if status is not None:
        return GateOrder(
            admit=status.admit,
            attendance=current,
            reason="no order for this gate yet: the event-wide status says so",
            source="status",
        )
    return GateOrder(admit=None, reason="waiting for the aggregator's order for this gate")


_ON_SIGN = {"ok": "bold", "near": "bold black on yellow", "breach": "bold white on black"}


def order_details(order: GateOrder) -> Text:
    """Attendance against ``hold_at`` (marked within 10% of it and past it) and the reason."""
    text = Text(justify="center")
    if order.attendance is not None:
        # Drawn on the sign's green or red: a chip, not a coloured figure, stays readable.
        style = _ON_SIGN[level(order.attendance, order.hold_at)]
        text.append("Attendance ")
        text.append(fmt_int(order.attendance), style=style)
        if order.hold_at is not None:
            text.append(f" of {fmt_int(order.hold_at)} (hold at)")
        if order.resume_below is not None:
            text.append(f" · admit again below {fmt_int(order.resume_below)}", style="dim")
    if order.reason:
        if text:
            text.append("\n")
        text.append(order.reason, style="italic")
    return text


def counts_text(status: wire.Status | None, gate: str) -> Text:
    """This gate's counter as the aggregator has it: in, out, net, rate, online."""
    g = status.gates.get(gate) if status is not None else None
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"Gate {gate}  ", style="bold")
    if status is None or g is None:
        text.append("no figures for this gate in the status", style="dim")
        return text
    text.append(f"in {fmt_int(g.in_)}  out {fmt_int(g.out)}  ")
    text.append(f"net {fmt_int(g.net)}", style="bold")
    text.append(f"  {g.per_minute:.0f}/min")
    if not g.online:
        seen, now = g.last_seen, status.ts
        ago = f" (last seen {fmt_age((now - seen).total_seconds())} ago)" if seen and now else ""
        text.append(f"  ✗ COUNTER OFFLINE{ago}: use the manual tally", style="bold red")
    else:
        text.append("  ● online", style="green")
    return text


def _tally_fate(state: TallyState, delivered: bool | None, unheard: bool) -> tuple[str, str]:
    """Whether what this tablet counted reaches the aggregator, in words and a style.

    The broker taking a message is not enough: with no aggregator for this event on the
    broker (a mistyped event id) it reaches no one, and the deputy must know.
    """
    number = f"#{state.seq} " if state.seq else ""
    if not state.in_use:
        return "not used yet", "dim"
    if delivered is None:
        return f"{number}not sent: no broker", "bold red"
    if unheard:
        return f"{number}NOT DELIVERED: no aggregator for this event (kept here)", "bold red"
    if delivered:
        return f"{number}delivered ✓", "green"
    return f"{number}waiting for the broker…", "bold dark_orange"


def tally_text(
    state: TallyState,
    status: wire.Status | None,
    gate: str,
    *,
    delivered: bool | None,
    unheard: bool = False,
) -> Text:
    """The manual tally: what this tablet counted, whether it reaches the aggregator (the
    broker has it, and an aggregator for this event is there: not ``unheard``), what the
    aggregator shows for it, and a warning when the permit does not list it."""
    name = manual_gate(gate)
    text = Text()
    text.append("Manual tally ", style="bold")
    text.append(f"({name})  ", style="dim")
    text.append(f"in {fmt_int(state.in_total)}  out {fmt_int(state.out_total)}  ")
    text.append(f"net {fmt_int(state.net)}", style="bold")
    fate, style = _tally_fate(state, delivered, unheard)
    text.append(f"  {fate}", style=style)
    if status is not None and status.gates:
        counted = status.gates.get(name)
        if counted is None:
            text.append(
                f"\n{name} is not a gate in the permit: the aggregator will reject these counts",
                style="bold red",
            )
        elif state.in_use:
            seen = local_clock(counted.last_seen, event_zone(status))
            text.append(
                f"\naggregator has in {fmt_int(counted.in_)} "
                f"out {fmt_int(counted.out)} (seen {seen})",
                style="dim",
            )
    return text
