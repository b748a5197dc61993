"""Rejection reasons grouped by what was wrong, not by their particulars (ids, numbers).

The report lists rejected messages, and accepted ones with a note, by reason; a reason
names the topic's id or the figures it refused, so the same fault would make a row per
message. :func:`normalise_reason` is the key they are grouped by.
"""

from __future__ import annotations

import re

__all__ = ["normalise_reason"]

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
