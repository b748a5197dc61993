"""The gate view's panels: pure functions of the gate's command, the status and the tally.

The order comes from ``kent/{e}/gate/{gate}/command`` (the aggregator's word for this
gate); until one arrives the status's ``admit`` is shown, marked as such. Nothing
here decides to admit or hold: that is the aggregator's rule (SPEC 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rich.text import Text

from dashboards.common.format import (
    event_zone,
    fmt_age,
    fmt_int,
    level,
    local_time,
    parse_ts,
)
from dashboards.gate.tally import TallyState, manual_gate

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


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _current(status: Mapping[str, Any] | None) -> int | None:
    att = status.get("attendance") if status else None
    return _int(att.get("current")) if isinstance(att, Mapping) else None


def gate_order(command: Mapping[str, Any] | None, status: Mapping[str, Any] | None) -> GateOrder:
    """The order for this gate: its command if there is one, else the status's ``admit``.

    The attendance shown is the status's, which is republished on every change; a
    command is republished only when the order changes, so its figure ages.
    """
    current = _current(status)
    if command is not None and isinstance(command.get("admit"), bool):
        return GateOrder(
            admit=command["admit"],
            attendance=current if current is not None else _int(command.get("attendance")),
            hold_at=_int(command.get("hold_at")),
            resume_below=_int(command.get("resume_below")),
            reason=str(command.get("reason") or ""),
            source="command",
        )
    if status is not None and isinstance(status.get("admit"), bool):
        return GateOrder(
            admit=status["admit"],
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


def counts_text(status: Mapping[str, Any] | None, gate: str) -> Text:
    """This gate's counter as the aggregator has it: in, out, net, rate, online."""
    gates = status.get("gates") if status else None
    g = gates.get(gate) if isinstance(gates, Mapping) else None
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"Gate {gate}  ", style="bold")
    if not isinstance(g, Mapping):
        text.append("no figures for this gate in the status", style="dim")
        return text
    text.append(f"in {fmt_int(g.get('in'))}  out {fmt_int(g.get('out'))}  ")
    text.append(f"net {fmt_int(g.get('net'))}", style="bold")
    rate = g.get("per_minute")
    if isinstance(rate, int | float) and not isinstance(rate, bool):
        text.append(f"  {rate:.0f}/min")
    if g.get("online") is False:
        seen = parse_ts(g.get("last_seen"))
        now = parse_ts(status.get("ts")) if status else None
        ago = f" (last seen {fmt_age((now - seen).total_seconds())} ago)" if seen and now else ""
        text.append(f"  ✗ COUNTER OFFLINE{ago}: use the manual tally", style="bold red")
    else:
        text.append("  ● online", style="green")
    return text


def tally_text(
    state: TallyState,
    status: Mapping[str, Any] | None,
    gate: str,
    *,
    delivered: bool | None,
) -> Text:
    """The manual tally: what this tablet counted, whether the broker has it, what the
    aggregator shows for it, and a warning when the permit does not list it."""
    name = manual_gate(gate)
    text = Text()
    text.append("Manual tally ", style="bold")
    text.append(f"({name})  ", style="dim")
    text.append(f"in {fmt_int(state.in_total)}  out {fmt_int(state.out_total)}  ")
    text.append(f"net {fmt_int(state.net)}", style="bold")
    if not state.in_use:
        text.append("  not used yet", style="dim")
    elif delivered is None:
        text.append(f"  #{state.seq} not sent: no broker", style="bold red")
    elif delivered:
        text.append(f"  #{state.seq} delivered ✓", style="green")
    else:
        text.append(f"  #{state.seq} waiting for the broker…", style="bold dark_orange")
    gates = status.get("gates") if status else None
    if isinstance(gates, Mapping) and gates:
        counted = gates.get(name)
        if not isinstance(counted, Mapping):
            text.append(
                f"\n{name} is not a gate in the permit: the aggregator will reject these counts",
                style="bold red",
            )
        elif state.in_use:
            zone = event_zone(status)
            seen = local_time(counted.get("last_seen"), zone)
            text.append(
                f"\naggregator has in {fmt_int(counted.get('in'))} "
                f"out {fmt_int(counted.get('out'))} (seen {seen})",
                style="dim",
            )
    return text
