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

Two more things a phone needs (``kent-ops serve`` shows a dashboard in a browser, about
40 to 48 columns wide upright). Textual's footer draws no key while the app does not
have the focus, which in a browser page is until the first tap: this one draws its
keys from the first frame. And its keys are one row that a narrow screen cuts
("a Ack alert n Note c Adjus▏^p palette": the checklist and the help lost): this one
keeps every key whole. One row if they fit; else one row of the compact style; else
that row without the palette's key (Ctrl+P still opens it, and the help says so); else,
on a phone, as many rows as the keys need.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["KeysFooter", "key_width", "plan"]

Shown = tuple[tuple[str, str, str, bool, str], ...]


def key_width(key: FooterKey, *, compact: bool) -> int:
    """Cells a footer key takes on its row, the space after it included.

    Plain: `` a `` then ``Ack alert `` (padded). Compact: ``a Ack alert`` and a margin.
    The palette's key is always drawn compact, with a rule before it and a pad after.
    """
    shown, words = len(key.key_display), len(key.description)
    if key.has_class("-command-palette"):
        return shown + 1 + words + 2
    if compact:
        return shown + (1 + words if words else 0) + 1
    return shown + 2 + (words + 1 if words else 0)


Plan = tuple[int, bool, bool]
"""How the keys are laid out: rows (1: one row), compact, with the palette's key."""


def plan(keys: list[FooterKey], width: int) -> Plan:
    """The first layout that shows every key whole in ``width`` columns (see the module)."""
    own = [k for k in keys if not k.has_class("-command-palette")]
    for compact, palette in ((False, True), (True, True), (True, False)):
        shown = keys if palette else own
        if sum(key_width(k, compact=compact) for k in shown) <= width:
            return 1, compact, palette
    cell = max((key_width(k, compact=False) for k in keys), default=1)
    columns = max(1, (width + 1) // (cell + 1))
    return -(-len(keys) // columns), False, True


class KeysFooter(Footer):
    """A :class:`Footer` that composes its keys again only when they change, shows them
    without waiting for the focus, and wraps them into rows when one row is too narrow."""

    DEFAULT_CSS = """
    KeysFooter.-rows {
        layout: grid;
        grid-gutter: 0 1;
        grid-rows: 1;
    }
    KeysFooter.-rows FooterKey.-command-palette {
        dock: none;
        border-left: none;
        padding: 0 0 0 1;
    }
    """

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

    _plan: Plan | None = None
    _keys: list[FooterKey] = []  # noqa: RUF012 - replaced, never changed in place
    """The keys last composed, the palette's among them even when it is left out."""

    def compose(self) -> ComposeResult:
        self._shown = self._showing() if self._bindings_ready else None
        widgets = list(super().compose())
        keys = self._keys = [w for w in widgets if isinstance(w, FooterKey)]
        # Laid out before they are drawn: the first frame has every key, whole.
        rows, compact, palette = self._plan = plan(keys, self.size.width or self.app.size.width)
        self.set_reactive(Footer.compact, compact)
        self.set_class(compact, "-compact")
        self.set_class(rows > 1, "-rows")
        self.styles.height = rows
        if rows > 1:
            self.styles.grid_size_columns = -(-len(keys) // rows)
        for widget in widgets:
            if isinstance(widget, FooterKey):
                if widget.has_class("-command-palette"):
                    if not palette:
                        continue
                else:
                    # Born in the footer's style, which the footer binds it to: no
                    # restyle when the binding sets it. (The palette's: always compact.)
                    widget.set_reactive(FooterKey.compact, compact)
            yield widget

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Compose the keys again if they changed, whether or not the app has the focus
        (Textual's own footer waits for it: a page in a browser shows no key until
        tapped)."""
        self._bindings_ready = True
        if (
            self._shown is not None
            and self.is_attached
            and screen is self.screen
            and self._showing() == self._shown
        ):
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self.recompose)

    def on_resize(self, event: events.Resize) -> None:
        """A screen turned or resized: lay the keys out again if another plan fits it."""
        if self._plan is not None and plan(self._keys, event.size.width) != self._plan:
            self.call_after_refresh(self.recompose)
