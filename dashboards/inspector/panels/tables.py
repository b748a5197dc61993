"""The middle of the main screen: a row per gate counter and a row per parking lot.

The rows are the core's (:mod:`kent_ops.core.site_view`, which the inspector's page in a
browser lists too); here each tagged cell gets its Rich style.
"""

from __future__ import annotations

from dashboards.common.rows import Cell, Column, Row
from dashboards.common.tagged_text import TAG_STYLES
from kent_ops.core import wire
from kent_ops.core.site_view import (
    GATE_HEADINGS,
    LOT_HEADINGS,
    Heading,
    SiteRow,
    gate_site_rows,
    lot_site_rows,
)

__all__ = ["GATE_COLUMNS", "LOT_COLUMNS", "gate_rows", "lot_rows"]


def _columns(headings: tuple[Heading, ...]) -> tuple[Column, ...]:
    return tuple(Column(h.key, h.label, numeric=h.numeric) for h in headings)


GATE_COLUMNS = _columns(GATE_HEADINGS)
LOT_COLUMNS = _columns(LOT_HEADINGS)


def _row(row: SiteRow) -> Row:
    return Row(row.key, tuple(Cell(span.text, TAG_STYLES[span.tag]) for span in row.cells))


def gate_rows(status: wire.Status | None) -> list[Row]:
    """A row per gate counter: online (● or ✗), in, out, net, persons a minute, last seen.

    A manual tally (a deputy's ``+``/``-``) is in italics, dim with "not used" until a
    deputy taps it (an unused tally is not a gate down); an offline counter is red; one
    heard but in doubt (``?``: stuck, or not heard since the broker restarted) amber.
    """
    return [_row(row) for row in gate_site_rows(status)]


def lot_rows(status: wire.Status | None) -> list[Row]:
    """A row per parking lot: capacity, cars in it, spaces free, share full."""
    return [_row(row) for row in lot_site_rows(status)]
