"""The gate view's help: what the screen says and what the keys do."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from dashboards.common.widgets.keys_footer import KeysFooter

__all__ = ["GateHelpScreen"]

LINES: tuple[tuple[str, str], ...] = (
    ("ADMIT", "let people in (green)"),
    ("HOLD", "stop admitting until the screen says ADMIT again (red)"),
    ("NO ORDER", "the aggregator has not sent an order for this gate yet"),
    ("+  or  =", "manual tally: one person in"),
    ("-", "manual tally: one person out"),
    ("? / F1", "this help"),
    ("q", "quit (the tally is kept on this device)"),
)


def help_table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, what in LINES:
        table.add_row(key, what)
    return table


class GateHelpScreen(Screen[None]):
    """Keys and what the gate view shows."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield Static(Text("Help", style="bold"), id="help-title")
        with VerticalScroll(id="help-scroll"):
            yield Static(help_table())
            yield Static(
                Text(
                    "Use the manual tally when this gate's counter is down (the screen says "
                    "COUNTER OFFLINE). Count every person through the gate, in and out. A "
                    "tally only counts up: a wrong press cannot be taken back, so tell the "
                    "inspector. The totals are kept on this device and survive a restart.",
                )
            )
            yield Static(
                Text(
                    'After each tap the tally line says what became of it: "sent, not yet '
                    'counted" once the broker has it, "counted" once the aggregator '
                    'counts it. If it says "not counted by the aggregator: tell the command '
                    'post", do so: your taps are kept here, but the attendance does not '
                    "include them.",
                )
            )
            yield Static(
                Text(
                    "A grey banner on top means the figures may be old (no broker, the "
                    "aggregator is down, or no news for 15 s): ask the inspector before "
                    "acting on an old order.",
                    style="italic",
                )
            )
        yield KeysFooter()
