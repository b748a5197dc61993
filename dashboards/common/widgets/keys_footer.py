"""Textual's footer of keys, built once per set of keys instead of at every focus change.

Textual's :class:`~textual.widgets.Footer` composes its keys again each time the
screen says its bindings changed: when the screen mounts, when a widget takes focus,
when the app gains focus. A dashboard starting up says so four or five times, and
each time a dozen keys are made, mounted and styled again (twice each: a key is born
compact and is then told it is not). Forked by the dozen on the command post, that
was a tenth of each dashboard's first screen. This footer shows the same keys, drawn
the same way and tapped the same way; it composes again only when what it shows (a
key, its label, whether it is enabled) changed, and its keys are born in the
footer's own style.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["KeysFooter"]

Shown = tuple[tuple[str, str, str, bool, str], ...]


class KeysFooter(Footer):
    """A :class:`Footer` that composes its keys again only when they change."""

    _shown: Shown | None = None

    def _showing(self) -> Shown:
        """What :meth:`Footer.compose` draws from: the bindings it shows, and the
        command palette's, each with whether it is enabled."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple(
            (key, binding.action, binding.description, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == palette
        )

    def compose(self) -> ComposeResult:
        self._shown = self._showing() if self._bindings_ready else None
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                # Born in the footer's style, which the footer binds it to: no restyle
                # when the binding sets it. (The palette's key is not bound: compact.)
                widget.set_reactive(FooterKey.compact, self.compact)
            yield widget

    def bindings_changed(self, screen: Screen[object]) -> None:
        if (
            self._shown is not None
            and self.is_attached
            and screen is self.screen
            and self._showing() == self._shown
        ):
            return
        super().bindings_changed(screen)
