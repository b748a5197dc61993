"""Every quotation of the law is word for word, and shows "…" wherever it is cut.

A quotation that does not start at the start of a sentence or item, or does not end at
its end, shows "…" there; so does every cut inside it. Checked against the chapter as
published (the seed text kept beside docs/law.md), for the report's legend and for every
curly-quoted passage of docs/law.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kent_ops.report.citations import EXCERPTS

ROOT = Path(__file__).resolve().parents[2]
ORDINANCE = ROOT / "docs" / "ordinance.txt"


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _law() -> str:
    body = ORDINANCE.read_text(encoding="utf-8")
    body = body[body.index("[HISTORY:") :]
    return _normal(body)


LAW = _law()
_START = re.compile(r"(?:^|[.:]|\(\w+\)|\.\[\d+\]|\b[A-G]\.)\s*$")
"""What may stand before a quotation that starts a sentence or item: a full stop, an
item's label, a footnote mark (and a colon, which ends the lead-in of a list)."""


def problems(quote: str) -> list[str]:
    """What is wrong with one quotation of the law (empty when nothing is)."""
    text = _normal(quote)
    lead, tail = text.startswith("…"), text.endswith("…")
    pieces = [p.strip() for p in text.strip("…").split("…")]
    found: list[str] = []
    at = 0
    spans = []
    for piece in pieces:
        piece = piece.rstrip(",;").strip() if piece.endswith((",", ";")) and tail else piece
        i = LAW.find(piece, at)
        if i < 0:
            found.append(f"not the law's words: {piece!r}")
            return found
        spans.append((i, i + len(piece)))
        at = i + len(piece)
    first, last = spans[0][0], spans[-1][1]
    if not lead and not _START.search(LAW[:first]):
        found.append(f"starts mid-sentence without “…”: {pieces[0][:40]!r}")
    ends = LAW[last:].lstrip()
    whole_end = LAW[last - 1] in ".:" or ends.startswith((".", "(", "[")) or ends == ""
    if not tail and not whole_end:
        found.append(f"ends mid-sentence without “…”: …{pieces[-1][-40:]!r}")
    for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False):
        if LAW[a_end:b_start].strip() == "":
            found.append("a “…” where nothing was left out")
    return found


@pytest.mark.parametrize("cite", list(EXCERPTS))
def test_each_excerpt_in_the_reports_legend(cite: str) -> None:
    assert problems(EXCERPTS[cite].words) == []


def _doc_quotes() -> list[str]:
    doc = (ROOT / "docs" / "law.md").read_text(encoding="utf-8")
    doc = re.sub(r"^> ?", "", doc, flags=re.M)
    return [q for q in re.findall(r"“([^”]+)”", doc) if len(q.split()) > 2]


@pytest.mark.parametrize("quote", _doc_quotes())
def test_each_quotation_in_docs_law_md(quote: str) -> None:
    assert problems(quote) == []


def test_the_checker_sees_a_cut_without_its_mark() -> None:
    assert problems("Drinking water adequate in quantity and quality") != []
    assert problems("Drinking water adequate in quantity and quality …") == []
    assert problems("for any part or portion of such assembly") != []
    assert problems("… permit-issuing official.") == []
