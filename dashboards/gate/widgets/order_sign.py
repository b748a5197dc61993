"""ADMIT / HOLD in letters as large as the screen allows, readable from a metre away."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from dashboards.common.bigtext import big_word, fit_scale
from dashboards.gate.panels import GateOrder

__all__ = ["OrderSign"]


class OrderSign(Widget):
    """The order word, scaled to fit; the colour comes from the parent's class."""

    order: reactive[GateOrder] = reactive(GateOrder(admit=None), layout=False)
    """The order shown."""

    def render(self) -> Text:
        word = self.order.word
        width, height = self.size
        scale = fit_scale(word, max(1, width - 2), max(1, height))
        return Text("\n".join(big_word(word, scale)), no_wrap=True)

    def on_resize(self) -> None:
        self.refresh()
