"""The connection banner: one line, on top, whenever the figures may be out of date."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

__all__ = ["ConnectionBanner"]


class ConnectionBanner(Static):
    """Says why the figures below may be old; hidden while they are current."""

    DEFAULT_CSS = """
    ConnectionBanner {
        width: 1fr;
        height: auto;
        padding: 0 1;
        background: $error;
        color: $text;
        text-style: bold;
        display: none;
    }
    ConnectionBanner.-shown {
        display: block;
    }
    """

    problem: reactive[str | None] = reactive(None)
    """The sentence to show; None hides the banner."""

    def watch_problem(self, problem: str | None) -> None:
        self.set_class(problem is not None, "-shown")
        # A Text, not a markup string: the sentence quotes the event id and the broker's
        # reason, which are not ours to interpret.
        self.update(Text(f"⚠ {problem}") if problem else Text(""))
