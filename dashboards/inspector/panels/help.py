"""The help screen's table of rules: each live rule with its severity and citation."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from dashboards.common.tagged_text import TAG_STYLES
from kent_ops.core.alert_view import SEVERITY_MARK
from kent_ops.core.rules import RULES

__all__ = ["rules_table"]


def rules_table() -> Table:
    """Each live rule of :data:`kent_ops.core.rules.RULES` in one line, with its citation.

    The name and its citation stack in the first column so the explanation keeps
    most of an 80-column screen.
    """
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    for rule in RULES.values():
        _, tag = SEVERITY_MARK.get(rule.severity, ("", ""))
        name = Text(rule.name, style=TAG_STYLES[tag])
        name.append(f"\n{rule.cite}", style="cyan")
        table.add_row(name, Text(f"{rule.summary}\n"))
    return table
