"""One line at the foot of the main screen: this inspector's latest action and its fate."""

from __future__ import annotations

from datetime import tzinfo

from rich.text import Text
from textual.reactive import reactive

from dashboards.common.format import event_zone, local_clock
from dashboards.common.widgets.panel import Panel
from kent_ops.core import wire
from kent_ops.core.inspector_actions import SentAction, describe

__all__ = ["NO_ACTIONS", "NO_ACTIONS_SHORT", "ActionLog", "action_line"]

_STATE = {
    "sent": ("… sending", "dark_orange"),
    "delivered": ("… sent, not yet recorded", "dark_orange"),
    "recorded": ("✓ recorded", "bold green"),
    "unsent": ("✗ not sent: no broker", "bold red"),
}
"""The state comes first on the line, so a narrow screen cuts the words, not the verdict."""


NO_ACTIONS = "No actions yet: a acknowledge · n note · c adjust attendance"
NO_ACTIONS_SHORT = "No actions yet"
"""On a phone: the footer below lists the keys, whole, and this line has one row."""


def action_line(action: SentAction | None, zone: tzinfo, hint: str = NO_ACTIONS) -> Text:
    """``✓ recorded 14:03:10 · made 14:03:09 acknowledge A-0004: “Called the organiser”``:
    when the aggregator recorded it (as the report shows it) and when the inspector made it
    (its ``ts``); ``hint`` if none."""
    if action is None:
        return Text(hint, style="dim")
    words, style = _STATE[action.state]
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(words, style=style)
    if action.state == "recorded" and action.recorded_at is not None:
        text.append(f" {local_clock(action.recorded_at, zone)} ·", style=style)
    text.append(f" made {local_clock(action.payload.ts, zone)} ", style="dim")
    text.append(describe(action.payload))
    return text


class ActionLog(Panel):
    """Shows the newest of this inspector's actions and whether it has been recorded."""

    actions: reactive[tuple[SentAction, ...]] = reactive(tuple, repaint=False)
    """This inspector's actions this session, oldest first."""
    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot (for the event's time zone)."""

    def __init__(self, *, id: str | None = None, hint: str = NO_ACTIONS) -> None:
        super().__init__(id=id)
        self.hint = hint

    def _redraw(self) -> None:
        latest = self.actions[-1] if self.actions else None
        self.show(action_line(latest, event_zone(self.status), self.hint))

    def watch_actions(self) -> None:
        self._redraw()

    def watch_status(self) -> None:
        self._redraw()
