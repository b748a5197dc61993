"""The law's state of the event: the permit's standing, the assembly, each property.

From the status (docs/protocol.md): ``permit`` (its status, since when and by which
resolution the Clerk changed it), ``assembly`` (whether it is on, docs/law.md "When the
assembly is on") and ``properties`` (persons on each property through its gates, and
its owner; permit:A counts the aggregate over all of them).
"""

from __future__ import annotations

from rich.text import Text

from dashboards.common.format import clean, event_zone, fmt_int, local_clock
from dashboards.common.rows import Cell, Column, Row
from kent_ops.core import wire

__all__ = ["PROPERTY_COLUMNS", "assembly_text", "permit_alarm", "property_rows"]

ID_CHARS = 32
"""An id from the wire is cut to this many characters in a line (a line stays a line)."""
NAME_CHARS = 24
"""A property or its owner is cut to this many characters: the table shares its column."""


def permit_alarm(status: wire.Status | None) -> Text | None:
    """One line when the permit is not issued (revoked, pending, denied, none); else None.

    A revoked permit names when it took effect and the Board's resolution: that is what
    an inspector cites to the organiser.
    """
    if status is None or status.permit.status == "issued":
        return None
    permit = status.permit
    number = clean(permit.number, limit=ID_CHARS) or "(no number)"
    state = clean(permit.status, limit=ID_CHARS) or "unknown"
    text = Text(no_wrap=True, overflow="ellipsis")
    if state == "revoked":
        text.append(f" PERMIT {number} REVOKED ", style="bold white on red")
    else:
        text.append(f" NO ISSUED PERMIT: {number} is {state} ", style="bold white on red")
    if permit.since is not None:
        text.append(f" since {local_clock(permit.since, event_zone(status), with_zone=True)}")
    if permit.resolution:
        text.append(" · resolution ")
        text.append(clean(permit.resolution, limit=60), style="bold")
    text.append(" · HOLD from 500 persons (permit:A, G)", style="bold red")
    return text


def assembly_text(status: wire.Status) -> str:
    """``assembly on`` or ``assembly off``: whether the duties that bind the assembly
    (doctor, nurses, parking, housing: docs/law.md, "When the assembly is on") hold now."""
    return "assembly on" if status.assembly.on else "assembly off"


PROPERTY_COLUMNS: tuple[Column, ...] = (
    Column("property", "Property"),
    Column("owner", "Owner"),
    Column("persons", "Persons", numeric=True),
)


def property_rows(status: wire.Status | None) -> list[Row]:
    """A row per property (persons on it through its gates, and its owner), in the
    permit's order; none when the assembly is on one property (its total is attendance)."""
    if status is None or len(status.properties) < 2:
        return []
    rows = []
    for prop_id, prop in status.properties.items():
        owner = clean(prop.owner, limit=NAME_CHARS)
        rows.append(
            Row(
                prop_id,
                (
                    Cell(clean(prop_id, limit=NAME_CHARS), "bold"),
                    Cell(owner),
                    Cell(fmt_int(prop.attendance)),
                ),
            )
        )
    return rows
