"""ADMIT / HOLD in letters as large as the screen allows, readable from a metre away.

On a phone held upright (about 40 columns by 45 rows) the width allows only the
smallest letters while most of the height is free, so the letters are stretched
upwards, up to three times as tall as wide: the word then fills the screen the way
it does on a tablet or a terminal. A word too wide even for the smallest letters is
written in plain bold capitals, never wrapped or cut.
"""

from __future__ import annotations

from functools import lru_cache

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from dashboards.common.bigtext import big_word, big_word_size, fit_scale
from dashboards.gate.panels import GateOrder

__all__ = ["OrderSign", "sign_lines"]

MOST_STRETCH = 3
"""How many times taller than wide a letter may be drawn."""


def _stretch_for(word: str, scale: int, height: int) -> int:
    """The tallest vertical scale (``scale`` up to MOST_STRETCH times it) that fits."""
    tall = scale
    for candidate in range(scale + 1, scale * MOST_STRETCH + 1):
        if big_word_size(word, candidate)[1] > height:
            break
        tall = candidate
    return tall


@lru_cache(maxsize=32)
def _sign_lines(word: str, width: int, height: int) -> tuple[str, ...]:
    return tuple(sign_lines(word, width, height))


def sign_lines(word: str, width: int, height: int) -> list[str]:
    """The lines that draw ``word`` as large as fits in ``width`` × ``height`` cells.

    Drawn at the vertical scale and then thinned to the horizontal one: the font's
    half blocks depend only on the rows, so keeping ``scale`` of every ``tall``
    columns of each pixel gives letters ``scale`` columns wide and ``tall`` half rows high.
    """
    if big_word_size(word, 1)[0] > width:
        return [word]
    scale = fit_scale(word, width, height)
    tall = _stretch_for(word, scale, height)
    lines = big_word(word, tall)
    if tall == scale:
        return lines
    keep = [c for c in range(len(lines[0])) if c % tall < scale]
    return ["".join(line[c] for c in keep) for line in lines]


class OrderSign(Widget):
    """The order word, scaled to fit; the colour comes from the parent's class.

    Every status brings a new order (its attendance moves), but the sign shows only
    the word: it is drawn again when the word or the size changes, not at each status,
    and the letters of a word at a size are made once.
    """

    order: reactive[GateOrder] = reactive(GateOrder(admit=None), layout=False, repaint=False)
    """The order shown."""

    def watch_order(self, old: GateOrder, new: GateOrder) -> None:
        if old.word != new.word:
            self.refresh()

    def render(self) -> Text:
        width, height = self.size
        lines = _sign_lines(self.order.word, max(1, width - 2), max(1, height))
        return Text("\n".join(lines), no_wrap=True, overflow="crop")

    def on_resize(self) -> None:
        self.refresh()
