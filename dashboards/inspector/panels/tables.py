"""The middle of the main screen: a row per gate counter and a row per parking lot."""

from __future__ import annotations

from dashboards.common.format import LEVEL_STYLE, Level, clean, fmt_age, fmt_int, fmt_share, level
from dashboards.common.rows import Cell, Column, Row
from kent_ops.core import wire
from kent_ops.core.rules import LOT_FULL_SHARE

__all__ = ["GATE_COLUMNS", "LOT_COLUMNS", "gate_rows", "lot_rows"]

GATE_COLUMNS: tuple[Column, ...] = (
    Column("state", ""),
    Column("gate", "Gate"),
    Column("in", "In", numeric=True),
    Column("out", "Out", numeric=True),
    Column("net", "Net", numeric=True),
    Column("rate", "/min", numeric=True),
    Column("seen", "Seen", numeric=True),
)

_ONLINE = Cell("●", "green")
_OFFLINE = Cell("✗", "bold red")
_UNUSED = Cell("○", "dim")
_DOUBT = Cell("?", "bold dark_orange")
"""Reporting, but its figure in doubt: stuck, or not heard since the broker restarted."""


def _doubt(sensor_id: str, status: wire.Status) -> str | None:
    """Why the status says a reporting sensor's figure is in doubt, or None."""
    sensor = status.sensors.get(sensor_id)
    return None if sensor is None else sensor.doubt


def _rate(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def _gate_row(gate_id: str, g: wire.GateState, status: wire.Status) -> Row:
    name = clean(gate_id, limit=32)
    if g.unused_tally():  # a deputy's tally nobody has tapped: nothing is wrong
        return Row(
            gate_id,
            (
                _UNUSED,
                Cell(name, "dim italic"),
                Cell(fmt_int(g.in_), "dim"),
                Cell(fmt_int(g.out), "dim"),
                Cell(fmt_int(g.net), "dim"),
                Cell(_rate(g.per_minute), "dim"),
                Cell("not used", "dim"),
            ),
        )
    seen = "never" if g.last_seen is None else "—"
    if g.last_seen is not None and status.ts is not None:
        seen = fmt_age((status.ts - g.last_seen).total_seconds())
    if g.online:
        label = Cell(name, "italic" if g.manual else "")
    else:
        label = Cell(name, "bold red italic" if g.manual else "bold red")
    state, seen_cell = (
        (_ONLINE, Cell(seen)) if g.online else (_OFFLINE, Cell(f"OFF {seen}", "bold red"))
    )
    doubt = _doubt(gate_id, status) if g.online else None
    if doubt is not None:  # heard, yet its count may be behind: stuck, or since a restart
        state = _DOUBT
        seen_cell = Cell(f"{'STUCK' if doubt == 'stuck' else '?'} {seen}", "bold dark_orange")
    return Row(
        gate_id,
        (
            state,
            label,
            Cell(fmt_int(g.in_)),
            Cell(fmt_int(g.out)),
            Cell(fmt_int(g.net), "bold"),
            Cell(_rate(g.per_minute)),
            seen_cell,
        ),
    )


def gate_rows(status: wire.Status | None) -> list[Row]:
    """A row per gate counter: online (● or ✗), in, out, net, persons a minute, last seen.

    A manual tally (a deputy's ``+``/``-``) is in italics, dim with "not used" until a
    deputy taps it (an unused tally is not a gate down); an offline counter is red; one
    heard but in doubt (``?``: stuck, or not heard since the broker restarted) amber.
    """
    if status is None:
        return []
    return [_gate_row(gate_id, status.gates[gate_id], status) for gate_id in sorted(status.gates)]


LOT_COLUMNS: tuple[Column, ...] = (
    Column("lot", "Lot"),
    Column("capacity", "Cap", numeric=True),
    Column("occupied", "Cars", numeric=True),
    Column("free", "Free", numeric=True),
    Column("share", "Full", numeric=True),
)


def _lot_level(share: float | None) -> Level:
    """Red from the share at which ``lot-full`` holds, amber within 10% of it."""
    if share is None:
        return "ok"
    return "breach" if share >= LOT_FULL_SHARE else level(share, LOT_FULL_SHARE)


def lot_rows(status: wire.Status | None) -> list[Row]:
    """A row per parking lot: capacity, cars in it, spaces free, share full."""
    if status is None:
        return []
    rows = []
    for lot_id in sorted(status.lots):
        lot = status.lots[lot_id]
        style = LEVEL_STYLE[_lot_level(lot.share)]
        name = clean(lot_id, limit=32)
        if not lot.online:
            label = Cell(f"✗ {name}", "bold red")
        elif _doubt(lot_id, status) is not None:
            label = Cell(f"? {name}", "bold dark_orange")
        else:
            label = Cell(name)
        rows.append(
            Row(
                lot_id,
                (
                    label,
                    Cell(fmt_int(lot.capacity)),
                    Cell(fmt_int(lot.occupied), style),
                    Cell(fmt_int(lot.free), style),
                    Cell(fmt_share(lot.share), style or "bold"),
                ),
            )
        )
    return rows
