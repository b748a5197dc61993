"""What a deputy's gate view shows, decided once for the terminal and for the phone.

The deputy's gate view exists twice: a Textual app (``kent-ops gate``, in a terminal or
on a tablet) and a small page that ``kent-ops serve`` feeds over a websocket to every
phone at a gate. Both draw the same :class:`GateView`, made here by pure functions of
the gate's command, the status, the connection state and the manual tally: the order
word and its colour, the reason, attendance against ``hold_at``, the gate's counts, the
tally's fate, and why the figures may be out of date. A screen only turns the view's
:class:`Span` tags into its own styles (Rich styles, CSS classes).

Nothing here decides to admit or hold: that is the aggregator's rule (hold at
``hold_at``, set from the permitted maximum at one time, permit:B(2); and at 500 or more
while there is no issued permit, permit:A). Until a command for the gate arrives the
status's ``admit`` is shown, marked as such.

A deputy stands at a gate of the permit; the gate's manual tally, when the permit has
one, is the gate ``{gate}-manual`` (docs/protocol.md, "Counting"). Only such a gate's
deputies may count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from kent_ops.core import wire
from kent_ops.core.connection import ConnectionState, connection_problem
from kent_ops.core.display import clean, event_zone, fmt_age, fmt_int, level, local_clock
from kent_ops.core.foresight import hold_words
from kent_ops.core.tagged import Line, Span, Tag, line_data

__all__ = [
    "ORDER_COLOURS",
    "GateOrder",
    "GateView",
    "Line",
    "Span",
    "NOT_COUNTED_AFTER_S",
    "TallyFacts",
    "counted_taps",
    "counts_line",
    "deputy_gate_problem",
    "gate_order",
    "gate_view",
    "header_line",
    "manual_gate",
    "order_lines",
    "tally_lines",
    "tally_listed",
    "tap_counted",
    "view_data",
]

Tone = Literal["admit", "hold", "none"]

ORDER_COLOURS: dict[Tone, str] = {"admit": "#0a6b2a", "hold": "#a3101a", "none": "#2b3a44"}
"""The sign's background: green to admit, red to hold, grey with no order. White letters
on either colour read from a metre away (contrast above 7:1)."""


def manual_gate(gate: str) -> str:
    """The counter id of a gate's manual tally: ``north`` → ``north-manual``."""
    return f"{gate}-manual"


def deputy_gate_problem(gate: str, gates: Mapping[str, bool], where: str) -> str | None:
    """Why no deputy can stand at ``gate``, or None if one can.

    Args:
        gate: the gate asked for.
        gates: every gate of the permit, with whether it is a manual tally.
        where: what listed them, for the sentence ("the permit MG-2027-003").
    """
    if gate in gates and not gates[gate]:
        return None
    if gate in gates:
        return (
            f"{gate} is a manual tally, not a gate: its deputy stands at the gate "
            f"it counts for ({gate.removesuffix('-manual')})"
        )
    standing = ", ".join(g for g, manual in gates.items() if not manual) or "none"
    return f"gate {gate!r} is not in {where} (its gates: {standing})"


def tally_listed(status: wire.Status | None, gate: str) -> bool | None:
    """Whether the permit (as the status lists its gates) has this gate's manual tally;
    None while no status says."""
    if status is None or not status.gates:
        return None
    return manual_gate(gate) in status.gates


# -- the order ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GateOrder:
    """What the deputy is told to do, and the figures behind it."""

    admit: bool | None
    attendance: int | None = None
    hold_at: int | None = None
    resume_below: int | None = None
    reason: str = ""
    source: Literal["command", "status", "none"] = "none"
    hold_in_s: int | None = None
    """Seconds until attendance reaches ``hold_at`` at the last 10 minutes' rate (advice)."""

    @property
    def word(self) -> str:
        if self.admit is None:
            return "NO ORDER"
        return "ADMIT" if self.admit else "HOLD"

    @property
    def tone(self) -> Tone:
        if self.admit is None:
            return "none"
        return "admit" if self.admit else "hold"


def gate_order(command: wire.GateCommand | None, status: wire.Status | None) -> GateOrder:
    """The order for this gate: its command if there is one, else the status's ``admit``.

    The attendance shown is the status's, which is republished on every change; a
    command is republished only when the order changes, so its figure ages. So is the
    forecast of a HOLD: the status's, to the second, over the command's whole minutes.
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
            hold_in_s=status.attendance.hold_in_s if status is not None else command.hold_in_s,
        )
    if status is not None:
        return GateOrder(
            admit=status.admit,
            attendance=current,
            reason="no order for this gate yet: the event-wide status says so",
            source="status",
            hold_in_s=status.attendance.hold_in_s,
        )
    return GateOrder(admit=None, reason="waiting for the aggregator's order for this gate")


_CHIP: dict[str, Tag] = {"ok": "chip", "near": "chip-near", "breach": "chip-breach"}


def order_lines(order: GateOrder) -> tuple[Line, ...]:
    """Attendance against ``hold_at`` (marked within 10% of it and past it), a HOLD coming
    within 30 minutes while admitting ("HOLD in about 12 min"), and the reason.

    On the sign's green or red a coloured figure would vanish: the attendance and the
    warning are chips.
    """
    lines: list[Line] = []
    if order.attendance is not None:
        spans = [Span("Attendance "), Span(fmt_int(order.attendance), _CHIP[_level(order)])]
        if order.hold_at is not None:
            spans.append(Span(f" · hold at {fmt_int(order.hold_at)}"))
        if order.resume_below is not None:
            spans.append(Span(f" · admit again below {fmt_int(order.resume_below)}", "dim"))
        lines.append(tuple(spans))
    coming = hold_words(order.hold_in_s) if order.admit else None
    if coming is not None:
        lines.append((Span(coming, "chip-near"),))
    if order.reason:
        lines.append((Span(order.reason, "italic"),))
    return tuple(lines)


def _level(order: GateOrder) -> str:
    return level(order.attendance, order.hold_at)


# -- the gate's counter, the header -------------------------------------------------------


def counts_line(status: wire.Status | None, gate: str) -> Line:
    """This gate's counter as the aggregator has it: in, out, net, rate, online."""
    g = status.gates.get(gate) if status is not None else None
    head = Span(f"Gate {gate}  ", "strong")
    if status is None or g is None:
        return (head, Span("no figures for this gate in the status", "dim"))
    spans = [
        head,
        Span(f"in {fmt_int(g.in_)}  out {fmt_int(g.out)}  "),
        Span(f"net {fmt_int(g.net)}", "strong"),
        Span(f"  {g.per_minute:.0f}/min"),
    ]
    if g.unused_tally():
        spans.append(Span("  ○ not used", "dim"))
    elif g.online is False:
        seen, now = g.last_seen, status.ts
        ago = f" (last seen {fmt_age((now - seen).total_seconds())} ago)" if seen and now else ""
        spans.append(Span(f"  ✗ COUNTER OFFLINE{ago}: use the manual tally", "alarm"))
    else:
        spans.append(Span("  ● online", "good"))
    return tuple(spans)


def header_line(gate: str, event_id: str, status: wire.Status | None, now: datetime | None) -> Line:
    """The event's local time, the gate and the event's name."""
    name = (clean(status.event_name) if status is not None else "") or event_id
    clock = local_clock(now, event_zone(status), with_zone=True)
    return (Span(clock, "strong"), Span(f"  Gate {gate}", "strong"), Span(f"  {name}"))


# -- the manual tally ----------------------------------------------------------------------


NOT_COUNTED_AFTER_S = 15.0
"""Seconds a tap may be with the broker, not yet counted in the aggregator's status,
before the screen says it was not counted (docs/protocol.md, "Counted, not sent")."""

NOT_COUNTED = "not counted by the aggregator: tell the command post"
"""What a deputy is told of taps the aggregator did not count in time, in words."""


@dataclass(frozen=True, slots=True)
class TallyFacts:
    """What the gate's manual tally has counted, what the broker has of it, and since when.

    A tap is *sent* once the broker has acknowledged a message whose totals carry it,
    and *counted* only once the aggregator's status shows the tally's totals reaching
    it (:func:`counted_taps`): the broker taking a message is not the aggregator
    counting it (it may refuse it, or no aggregator may be listening).
    """

    in_total: int = 0
    out_total: int = 0
    sent: int | None = None
    """Taps the broker has: the most any acknowledged message carried (None: no broker
    to send to)."""
    waiting_s: float | None = None
    """Seconds since the broker took the first tap the aggregator has not counted yet;
    None when every tap the broker has is counted."""
    unheard: bool = False
    """No aggregator for this event is on the broker: what it takes reaches no one."""

    @property
    def taps(self) -> int:
        """Taps counted: each is one person in or out (messages and heartbeats are not)."""
        return self.in_total + self.out_total

    @property
    def net(self) -> int:
        return self.in_total - self.out_total


def counted_taps(status: wire.Status | None, gate: str) -> int | None:
    """Taps of ``gate``'s manual tally the aggregator counted: its ``in + out`` in the
    status (a tap is counted once these totals reach it); None while no status says."""
    counted = status.gates.get(manual_gate(gate)) if status is not None else None
    return None if counted is None else counted.in_ + counted.out


def tap_counted(index: int, *, sent: int | None, counted: int | None) -> bool:
    """Whether the tap that brought the tally's ``in + out`` to ``index`` is counted: the
    aggregator's totals reach it and (with a broker) the broker has it. The second
    keeps a tally that started again from nothing (its file lost) from reading as
    counted on the strength of the totals the aggregator kept from before."""
    return counted is not None and counted >= index and (sent is None or sent >= index)


def _tally_fate(facts: TallyFacts, status: wire.Status | None, gate: str) -> Span:
    """Whether what was counted here is counted by the aggregator, in words and a tag.

    Counted only when the status says so; sent when the broker has it; a tap sent
    :data:`NOT_COUNTED_AFTER_S` ago and still not counted says so, and so does a
    broker with no aggregator for this event on it. Until the aggregator's first
    status the tally sends nothing (its messages carry the aggregator's time, not yet
    known). Never a tick: words.
    """
    counted = counted_taps(status, gate)
    if not facts.taps:
        return Span("  not used yet", "dim")
    number = f"  #{facts.taps} "
    if tap_counted(facts.taps, sent=facts.sent, counted=counted):
        return Span(f"{number}counted", "good")
    if facts.sent is None:
        return Span(f"{number}not sent: no broker", "alarm")
    if facts.unheard:
        return Span(f"{number}not counted: no aggregator for this event on the broker", "alarm")
    if facts.waiting_s is not None and facts.waiting_s >= NOT_COUNTED_AFTER_S:
        return Span(f"{number}{NOT_COUNTED}", "alarm")
    if facts.sent >= facts.taps:
        return Span(f"{number}sent, not yet counted", "warn")
    if status is None:
        return Span(f"{number}not yet sent: waiting for the aggregator's first status", "warn")
    return Span(f"{number}not yet sent: waiting for the broker", "warn")


def tally_lines(facts: TallyFacts, status: wire.Status | None, gate: str) -> tuple[Line, ...]:
    """The manual tally: what was counted, whether it reaches the aggregator and what the
    aggregator shows for it; only a warning when the permit has no tally at this gate."""
    name = manual_gate(gate)
    if tally_listed(status, gate) is False:
        return (
            (Span(f"{name} is not a gate in the permit: no manual tally at this gate", "alarm"),),
        )
    first = (
        Span("Manual tally ", "strong"),
        Span(f"({name})  ", "dim"),
        Span(f"in {fmt_int(facts.in_total)}  out {fmt_int(facts.out_total)}  "),
        Span(f"net {fmt_int(facts.net)}", "strong"),
        _tally_fate(facts, status, gate),
    )
    counted = status.gates.get(name) if status is not None else None
    if counted is not None and facts.taps:
        seen = local_clock(counted.last_seen, event_zone(status))
        text = f"aggregator has in {fmt_int(counted.in_)} out {fmt_int(counted.out)} (seen {seen})"
        return first, (Span(text, "dim"),)
    return (first,)


# -- the whole view ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GateView:
    """Everything a gate view shows, in the order a screen shows it."""

    gate: str
    header: Line
    word: str
    tone: Tone
    colour: str
    details: tuple[Line, ...]
    counts: Line
    tally: tuple[Line, ...]
    can_count: bool | None
    """Whether this gate has a manual tally (None: no status says yet)."""
    problem: str | None
    """Why the figures may be out of date, in one sentence; None while they are current."""
    attendance: int | None
    hold_at: int | None
    timezone: str = "UTC"
    """The event's zone (IANA name), for the times a phone writes itself."""


def gate_view(
    gate: str,
    event_id: str,
    *,
    status: wire.Status | None,
    command: wire.GateCommand | None,
    connection: ConnectionState,
    now: datetime,
    monotonic: float,
    tally: TallyFacts,
) -> GateView:
    """The view of one gate now (``monotonic``: a monotonic clock's reading now)."""
    order = gate_order(command, status)
    problem = connection_problem(connection, now, event_zone(status), monotonic=monotonic)
    if problem is None and status is not None and status.gates and gate not in status.gates:
        problem = f"Gate {gate} is not in the permit: no order will come for it"
    return GateView(
        gate=gate,
        header=header_line(gate, event_id, status, now),
        word=order.word,
        tone=order.tone,
        colour=ORDER_COLOURS[order.tone],
        details=order_lines(order),
        counts=counts_line(status, gate),
        tally=tally_lines(tally, status, gate),
        can_count=tally_listed(status, gate),
        problem=problem,
        attendance=order.attendance,
        hold_at=order.hold_at,
        timezone=str(getattr(event_zone(status), "key", "UTC")),
    )


def view_data(view: GateView) -> dict[str, object]:
    """The view as JSON-ready data: lines are lists of ``[text, tag]`` pairs."""
    return {
        "gate": view.gate,
        "header": line_data(view.header),
        "word": view.word,
        "tone": view.tone,
        "colour": view.colour,
        "details": [line_data(line) for line in view.details],
        "counts": line_data(view.counts),
        "tally": [line_data(line) for line in view.tally],
        "can_count": view.can_count,
        "problem": view.problem,
        "attendance": view.attendance,
        "hold_at": view.hold_at,
        "timezone": view.timezone,
    }
