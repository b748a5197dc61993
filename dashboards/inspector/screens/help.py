"""The help screen: every key, and each rule in one line with its citation."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from dashboards.common.widgets.keys_footer import KeysFooter
from dashboards.inspector.panels import rules_table

__all__ = ["HelpScreen", "keys_table"]

KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓", "choose an alert"),
    ("Enter / d", "the chosen alert in full: figures, evidence, history"),
    ("a", "acknowledge the chosen alert, with a comment"),
    ("n", "add a note (about the chosen alert on its detail screen)"),
    ("c", "adjust attendance to a counted figure, with a reason"),
    ("i", "the facilities checklist, permit:C, D and F"),
    ("  o / d / n", "there: mark the item ok, deficient (with a note) or n/a"),
    ("R", "revoke or reinstate the permit, by resolution (the Town Clerk's dashboard)"),
    ("Tab", "move between the alerts, gates and lots"),
    ("Ctrl+P", "command palette: every action by name"),
    ("? / F1", "this help"),
    ("Esc", "back"),
    ("q", "quit"),
)


CLERK_KEY = "R"
"""The key that only the Town Clerk's dashboard has."""


def keys_table(*, clerk: bool = False) -> Table:
    """The key list, as on the footer but with a sentence each (``R`` for the Clerk only)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, what in KEYS:
        if key != CLERK_KEY or clerk:
            table.add_row(key, what)
    return table


class HelpScreen(Screen[None]):
    """Keys and rules; every action asks for confirmation before it is sent."""

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "app.pop_screen", "Back"),
    ]

    def __init__(self, *, clerk: str | None = None, notice: Sequence[str] = ()) -> None:
        super().__init__(id="help")
        self.clerk = clerk
        self.notice = tuple(notice)

    def compose(self) -> ComposeResult:
        yield Static(Text("Help", style="bold"), id="help-title")
        with VerticalScroll(id="help-scroll"):
            if self.notice:
                yield Static(Text("\n".join(self.notice)), id="help-notice")
            yield Static(Text("Keys", style="bold underline"))
            yield Static(keys_table(clerk=self.clerk is not None), id="help-keys")
            yield Static(
                Text(
                    "Every action asks for confirmation, then shows “recorded” once the "
                    "aggregator's status or alert reflects it.",
                    style="italic",
                )
            )
            yield Static(Text("Rules", style="bold underline"))
            yield Static(rules_table(), id="help-rules")
            yield Static(
                Text(
                    "Red: past its limit. Amber: within 10% of it. UNCERTAIN: a gate counter "
                    "is down, so attendance may be low and findings indeterminate.",
                    style="italic",
                )
            )
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
