"""The law's state of the event: the permit's standing, the assembly, each property.

From the status (docs/protocol.md): ``permit`` (its status, since when and by which
resolution the Clerk changed it), ``assembly`` (whether it is on, docs/law.md "When the
assembly is on") and ``properties`` (persons on each property through its gates, and
its owner; permit:A counts the aggregate over all of them). What each says is the
core's (:mod:`kent_ops.core.glance_view`, which the inspector's page draws too).
"""

from __future__ import annotations

from rich.text import Text

from dashboards.common.rows import Cell, Column, Row
from dashboards.common.tagged_text import line_text
from kent_ops.core import wire
from kent_ops.core.glance_view import ID_CHARS, NAME_CHARS, assembly_text, property_lines
from kent_ops.core.glance_view import permit_alarm as permit_alarm_line

__all__ = [
    "ID_CHARS",
    "NAME_CHARS",
    "PROPERTY_COLUMNS",
    "assembly_text",
    "permit_alarm",
    "property_rows",
]


def permit_alarm(status: wire.Status | None) -> Text | None:
    """One line when the permit is not issued (revoked, pending, denied, none); else None.

    A revoked permit names when it took effect and the Board's resolution: that is what
    an inspector cites to the organiser.
    """
    line = permit_alarm_line(status)
    if line is None:
        return None
    return line_text(line, Text(no_wrap=True, overflow="ellipsis"))


PROPERTY_COLUMNS: tuple[Column, ...] = (
    Column("property", "Property"),
    Column("owner", "Owner"),
    Column("persons", "Persons", numeric=True),
)


def property_rows(status: wire.Status | None) -> list[Row]:
    """A row per property (persons on it through its gates, and its owner), in the
    permit's order; none when the assembly is on one property (its total is attendance)."""
    return [
        Row(line.key, (Cell(line.name, "bold"), Cell(line.owner), Cell(line.persons)))
        for line in property_lines(status)
    ]
