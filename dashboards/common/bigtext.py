"""Large text for reading at a distance: the attendance figure and the gate's order.

Two fonts. A 3-row box-drawing font for numbers (the inspector's attendance), and a
5×5 pixel font for the gate's ADMIT / HOLD, drawn with half blocks so each pixel is
about square on a terminal and scaled to fill the space it has: a deputy reads it from
a metre away. Pure functions returning lines of text; the caller styles them.
"""

from __future__ import annotations

__all__ = ["big_number", "big_word", "big_word_size", "fit_scale"]

_DIGITS: dict[str, tuple[str, str, str]] = {
    "0": ("┏━┓", "┃ ┃", "┗━┛"),
    "1": ("╺┓ ", " ┃ ", "╺┻╸"),
    "2": ("╺━┓", "┏━┛", "┗━╸"),
    "3": ("╺━┓", " ━┫", "╺━┛"),
    "4": ("╻ ╻", "┗━┫", "  ╹"),
    "5": ("┏━╸", "┗━┓", "╺━┛"),
    "6": ("┏━╸", "┣━┓", "┗━┛"),
    "7": ("╺━┓", "  ┃", "  ╹"),
    "8": ("┏━┓", "┣━┫", "┗━┛"),
    "9": ("┏━┓", "┗━┫", "╺━┛"),
    ",": (" ", " ", "╻"),
    "-": ("   ", "╺━╸", "   "),
    " ": (" ", " ", " "),
}
_DASH = ("   ", "╺━╸", "   ")


def big_number(text: str) -> list[str]:
    """Three lines drawing ``text`` (digits, commas, minus); other characters as a dash."""
    rows = ["", "", ""]
    for char in text:
        glyph = _DIGITS.get(char, _DASH)
        for i in range(3):
            rows[i] += glyph[i]
    return rows


_LETTERS: dict[str, tuple[str, ...]] = {
    "A": (".###.", "#...#", "#####", "#...#", "#...#"),
    "D": ("####.", "#...#", "#...#", "#...#", "####."),
    "E": ("#####", "#....", "####.", "#....", "#####"),
    "H": ("#...#", "#...#", "#####", "#...#", "#...#"),
    "I": ("#####", "..#..", "..#..", "..#..", "#####"),
    "L": ("#....", "#....", "#....", "#....", "#####"),
    "M": ("#...#", "##.##", "#.#.#", "#...#", "#...#"),
    "N": ("#...#", "##..#", "#.#.#", "#..##", "#...#"),
    "O": (".###.", "#...#", "#...#", "#...#", ".###."),
    "R": ("####.", "#...#", "####.", "#..#.", "#...#"),
    "T": ("#####", "..#..", "..#..", "..#..", "..#.."),
    "W": ("#...#", "#...#", "#.#.#", "##.##", "#...#"),
    " ": ("...", "...", "...", "...", "..."),
}
_GLYPH_ROWS = 5


def _pixels(word: str) -> list[str]:
    rows = [""] * _GLYPH_ROWS
    for index, char in enumerate(word.upper()):
        glyph = _LETTERS.get(char, _LETTERS[" "])
        for i in range(_GLYPH_ROWS):
            rows[i] += ("." if index else "") + glyph[i]
    return rows


def big_word_size(word: str, scale: int) -> tuple[int, int]:
    """(columns, rows) that :func:`big_word` takes at ``scale``."""
    pixels = _pixels(word)
    return len(pixels[0]) * scale, (_GLYPH_ROWS * scale + 1) // 2


def fit_scale(word: str, width: int, height: int, *, most: int = 8) -> int:
    """The largest scale (at least 1) at which ``word`` fits in ``width`` × ``height``."""
    scale = 1
    for candidate in range(2, most + 1):
        columns, rows = big_word_size(word, candidate)
        if columns > width or rows > height:
            break
        scale = candidate
    return scale


def big_word(word: str, scale: int = 1) -> list[str]:
    """Lines drawing ``word`` in the 5×5 font; each pixel ``scale`` columns by half a row."""
    pixels = []
    for row in _pixels(word):
        wide = "".join(ch * scale for ch in row)
        pixels.extend([wide] * scale)
    if len(pixels) % 2:
        pixels.append("." * len(pixels[0]))
    lines = []
    for top, bottom in zip(pixels[0::2], pixels[1::2], strict=True):
        line = []
        for t, b in zip(top, bottom, strict=True):
            if t == "#" and b == "#":
                line.append("█")
            elif t == "#":
                line.append("▀")
            elif b == "#":
                line.append("▄")
            else:
                line.append(" ")
        lines.append("".join(line))
    return lines
