"""Messages grouped by what was wrong with them, so a thousand rejections read as a few lines.

The report lists rejected messages, and accepted ones that changed nothing, by a reason
without its particulars (ids and numbers), with how many and one example of each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

__all__ = ["Reasons", "normalise_reason"]


@dataclass(slots=True)
class Reasons:
    """Messages grouped by a normalised reason: how many, and one example of each."""

    count: int = 0
    example: str = ""
    topic: str = ""
    first_at: datetime | None = None
    last_at: datetime | None = None


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def normalise_reason(reason: str) -> str:
    """A reason without its particulars, so rejections group by what was wrong.

    ``wrong field: Expected `int`, got `str` - at `$.seq``` and ``not valid JSON: …`` keep
    only their first clause; ids and numbers become ``…`` and ``N``.
    """
    head, sep, _ = reason.partition(": ")
    if sep and head in ("not valid JSON", "undecodable payload", "bad timestamp"):
        return head
    if sep and head == "wrong field":
        detail = reason[len(head) + 2 :]
        where = detail.rfind("at `$.")
        return f"wrong field {detail[where + 3 :]}" if where >= 0 else "wrong field"
    text = _QUOTED.sub("…", reason)
    text = _NUMBER.sub("N", text)
    return text.split(" (", 1)[0] if "→" in text else text
