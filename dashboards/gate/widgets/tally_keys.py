"""The manual tally's two keys as buttons a thumb can hit: one in, one out.

On a phone or a tablet (``kent-ops serve``) the deputy taps them; in a terminal the
``+`` and ``-`` keys do the same and the buttons can be clicked too. They take no
keyboard focus, so Enter and the arrow keys keep doing what they did before. A press
asks the app to count through its own actions (``app.count_in``), as the keys do.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button

__all__ = ["TallyKeys"]


class _TallyButton(Button, can_focus=False):
    """A button that counts every tap, without taking the keyboard's focus.

    A plain Button ignores a click while it still shows the last one (0.2 s): a
    deputy tapping quickly for a group coming through would lose counts.
    """

    async def _on_click(self, event: events.Click) -> None:
        event.stop()
        event.prevent_default()  # not Button's own handler, which drops quick taps
        self.press()


class TallyKeys(Horizontal):
    """``+ in`` and ``− out``, side by side, each half the width."""

    def compose(self) -> ComposeResult:
        yield _TallyButton("+ in", id="tally-in", variant="primary")
        yield _TallyButton("− out", id="tally-out", variant="primary")

    @on(Button.Pressed, "#tally-in")
    async def _count_in(self, event: Button.Pressed) -> None:
        event.stop()
        await self.run_action("app.count_in")

    @on(Button.Pressed, "#tally-out")
    async def _count_out(self, event: Button.Pressed) -> None:
        event.stop()
        await self.run_action("app.count_out")
