"""Text that came off the wire, made safe to show: control characters removed.

Notes, comments, reasons, badge ids, resolutions and topics are written by whoever holds
a sensor's or an inspector's credentials. HTML-escaping stops them from changing the
page; it does not stop an ESC or BEL from recolouring a terminal that ``cat``s a CSV, nor
a right-to-left override from turning a sentence around. Every such text passes through
:func:`clean` before it reaches the page or a CSV.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["clean", "clean_figures"]

_LINE_BREAKS = re.compile(r"[\t\n\r\v\f]+")
_CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0, DEL and C1 controls (ESC, BEL, CSI, ...)
    "\u200e\u200f\u202a-\u202e\u2066-\u2069"  # direction marks, embeddings, overrides
    "\u2028\u2029]"  # line and paragraph separators
)


def clean(text: str | None) -> str:
    """``text`` without control characters; tabs and line breaks become one space."""
    if not text:
        return ""
    return _CONTROLS.sub("", _LINE_BREAKS.sub(" ", text))


def clean_figures(values: dict[str, Any]) -> dict[str, Any]:
    """A figures dict with every text value (an inspector's note, say) cleaned."""
    return {clean(k): clean(v) if isinstance(v, str) else v for k, v in values.items()}
