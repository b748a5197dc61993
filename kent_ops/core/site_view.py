"""The gates and lots as every inspector's screen lists them: a row of tagged cells each.

The terminal's dashboard draws these rows in its tables and the inspector's page in a
browser in its own; both take them from here, so a counter down reads red, an unused
manual tally dim ("not used", never a fault), and a lot near ``lot-full`` amber on
either. Cells are :class:`~kent_ops.core.tagged.Span` (text and how it reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from kent_ops.core import wire
from kent_ops.core.display import Level, clean, fmt_age, fmt_int, fmt_share, level
from kent_ops.core.rules import LOT_FULL_SHARE
from kent_ops.core.tagged import Span, Tag

__all__ = [
    "GATE_HEADINGS",
    "LOT_HEADINGS",
    "Heading",
    "SiteRow",
    "gate_site_rows",
    "lot_level",
    "lot_site_rows",
]


@dataclass(frozen=True, slots=True)
class Heading:
    """A column: its key, its heading, and whether it holds figures (right-aligned)."""

    key: str
    label: str
    numeric: bool = False


@dataclass(frozen=True, slots=True)
class SiteRow:
    """One gate or lot: its id and its cells, in the columns' order."""

    key: str
    cells: tuple[Span, ...]
    down: bool = False
    """An offline counter or lot: its figures may be behind."""


GATE_HEADINGS: tuple[Heading, ...] = (
    Heading("state", ""),
    Heading("gate", "Gate"),
    Heading("in", "In", numeric=True),
    Heading("out", "Out", numeric=True),
    Heading("net", "Net", numeric=True),
    Heading("rate", "/min", numeric=True),
    Heading("seen", "Seen", numeric=True),
)

_ONLINE = Span("●", "good")
_OFFLINE = Span("✗", "alarm")
_UNUSED = Span("○", "dim")
_DOUBT = Span("?", "warn")
"""Reporting, but its figure in doubt: stuck, or not heard since the broker restarted."""


def _doubt(sensor_id: str, status: wire.Status) -> str | None:
    """Why the status says a reporting sensor's figure is in doubt, or None."""
    sensor = status.sensors.get(sensor_id)
    return None if sensor is None else sensor.doubt


def _rate(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def _gate_row(gate_id: str, g: wire.GateState, status: wire.Status) -> SiteRow:
    name = clean(gate_id, limit=32)
    if g.unused_tally():  # a deputy's tally nobody has tapped: nothing is wrong
        cells = (
            _UNUSED,
            Span(name, "dim-italic"),
            Span(fmt_int(g.in_), "dim"),
            Span(fmt_int(g.out), "dim"),
            Span(fmt_int(g.net), "dim"),
            Span(_rate(g.per_minute), "dim"),
            Span("not used", "dim"),
        )
        return SiteRow(gate_id, cells)
    seen = "never" if g.last_seen is None else "—"
    if g.last_seen is not None and status.ts is not None:
        seen = fmt_age((status.ts - g.last_seen).total_seconds())
    if g.online:
        label = Span(name, "italic" if g.manual else "")
    else:
        label = Span(name, "alarm-italic" if g.manual else "alarm")
    state, seen_span = (
        (_ONLINE, Span(seen)) if g.online else (_OFFLINE, Span(f"OFF {seen}", "alarm"))
    )
    doubt = _doubt(gate_id, status) if g.online else None
    if doubt is not None:  # heard, yet its count may be behind: stuck, or since a restart
        state = _DOUBT
        seen_span = Span(f"{'STUCK' if doubt == 'stuck' else '?'} {seen}", "warn")
    cells = (
        state,
        label,
        Span(fmt_int(g.in_)),
        Span(fmt_int(g.out)),
        Span(fmt_int(g.net), "strong"),
        Span(_rate(g.per_minute)),
        seen_span,
    )
    return SiteRow(gate_id, cells, down=not g.online)


def gate_site_rows(status: wire.Status | None) -> list[SiteRow]:
    """A row per gate counter: online (● or ✗; ? when heard but in doubt, stuck or not
    heard since the broker restarted), in, out, net, persons a minute, last seen.

    A manual tally (a deputy's ``+``/``-``) is in italics, dim with "not used" until a
    deputy taps it (an unused tally is not a gate down); an offline counter is red.
    """
    if status is None:
        return []
    return [_gate_row(gate_id, status.gates[gate_id], status) for gate_id in sorted(status.gates)]


LOT_HEADINGS: tuple[Heading, ...] = (
    Heading("lot", "Lot"),
    Heading("capacity", "Cap", numeric=True),
    Heading("occupied", "Cars", numeric=True),
    Heading("free", "Free", numeric=True),
    Heading("share", "Full", numeric=True),
)

_LEVEL_TAG: dict[Level, Tag] = {"ok": "", "near": "warn", "breach": "alarm"}


def lot_level(share: float | None) -> Level:
    """Red from the share at which ``lot-full`` holds, amber within 10% of it."""
    if share is None:
        return "ok"
    return "breach" if share >= LOT_FULL_SHARE else level(share, LOT_FULL_SHARE)


def lot_site_rows(status: wire.Status | None) -> list[SiteRow]:
    """A row per parking lot: capacity, cars in it, spaces free, share full."""
    if status is None:
        return []
    rows = []
    for lot_id in sorted(status.lots):
        lot = status.lots[lot_id]
        tag = _LEVEL_TAG[lot_level(lot.share)]
        name = clean(lot_id, limit=32)
        if not lot.online:
            label = Span(f"✗ {name}", "alarm")
        elif _doubt(lot_id, status) is not None:
            label = Span(f"? {name}", "warn")
        else:
            label = Span(name)
        cells = (
            label,
            Span(fmt_int(lot.capacity)),
            Span(fmt_int(lot.occupied), tag),
            Span(fmt_int(lot.free), tag),
            Span(fmt_share(lot.share), tag or "strong"),
        )
        rows.append(SiteRow(lot_id, cells, down=not lot.online))
    return rows
