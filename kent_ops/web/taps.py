"""A phone's taps on the manual tally: each counted once, whatever the link does.

A deputy's phone keeps every tap (``+ in``, ``− out``) with a random id in its own
storage until the server says the broker has it, and sends what it keeps again
whenever its link returns: a tap may therefore arrive twice, or after a restart of
``kent-ops serve``. The :class:`TapJournal` remembers which ids were applied, on disk,
so a repeat is recognised and only acknowledged.

The journal is written before the tally counts: one line per batch of taps, with the
tally's totals once the batch is counted, flushed to disk. Should the server stop
between the two, the tally's state file is behind the journal's last totals at the
next start, and :meth:`TapJournal.behind` says by how much, so the tally catches up
once and nothing is lost or counted twice. A tap's *index* is the tally's ``in_total +
out_total`` once it is counted: every message whose totals reach that index carries it,
so the broker's acknowledgement of such a message delivers the tap.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["MOST_TAPS", "Tap", "TapJournal", "parse_taps"]

Direction = Literal["in", "out"]
_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
MOST_TAPS = 500
"""Taps in one message from a phone: more than a deputy taps in a long outage's minute."""
KEEP = 20_000
"""Ids the journal remembers per gate: many hours of a busy gate's taps."""


@dataclass(frozen=True, slots=True)
class Tap:
    """One tap: its id (made by the phone) and whether a person went in or out."""

    id: str
    direction: Direction


def parse_taps(value: object) -> list[Tap] | None:
    """The taps of a phone's message, in order; None if it is not a list of valid taps."""
    if not isinstance(value, list) or not 0 < len(value) <= MOST_TAPS:
        return None
    taps = []
    for entry in value:
        if not isinstance(entry, dict):
            return None
        tap_id, direction = entry.get("id"), entry.get("d")
        if not isinstance(tap_id, str) or not _ID.match(tap_id) or direction not in ("in", "out"):
            return None
        taps.append(Tap(tap_id, direction))
    return taps


class TapJournal:
    """The ids of the taps applied to one gate's tally, with each one's index, on disk.

    Args:
        path: the journal file (``{event}.{gate}-manual.taps`` in the state folder).
        keep: how many of the latest ids to remember; older ones are dropped when the
            file is rewritten (a phone does not keep a tap that long unconfirmed).
    """

    def __init__(self, path: Path, *, keep: int = KEEP) -> None:
        self.path = path
        self.keep = keep
        self._index: dict[str, int] = {}
        self.lines = 0
        self.totals: tuple[int, int] = (0, 0)
        """The tally's (in_total, out_total) after the last batch written."""
        self._load()

    def _load(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        for line in text.splitlines():
            try:
                entry = json.loads(line)
                ids, totals = entry["ids"], (int(entry["in"]), int(entry["out"]))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a crash: its batch was never counted
            self._take(ids, totals)
            self.lines += 1

    def _take(self, ids: Iterable[str], totals: tuple[int, int]) -> None:
        index = sum(totals)
        for tap_id in ids:
            self._index[tap_id] = index
        self.totals = totals
        if len(self._index) > 2 * self.keep:
            for tap_id in list(self._index)[: len(self._index) - self.keep]:
                del self._index[tap_id]

    def index(self, tap_id: str) -> int | None:
        """The index of an applied tap; None if it was never applied (or long forgotten)."""
        return self._index.get(tap_id)

    def behind(self, in_total: int, out_total: int) -> tuple[int, int]:
        """How far a tally with these totals is behind the journal's last batch."""
        return max(0, self.totals[0] - in_total), max(0, self.totals[1] - out_total)

    def record(self, ids: list[str], in_total: int, out_total: int) -> None:
        """Write one batch (its ids and the totals once counted) and flush it to disk."""
        line = json.dumps({"ids": ids, "in": in_total, "out": out_total}) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        self._take(ids, (in_total, out_total))
        self.lines += 1
        if self.lines > 2 * self.keep:
            self._compact()

    def _compact(self) -> None:
        """Rewrite the file with the latest ids only: old or new file, never half of one."""
        entries = list(self._index.items())[-self.keep :]
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        with temporary.open("w", encoding="utf-8") as f:
            for tap_id, index in entries:
                f.write(json.dumps({"ids": [tap_id], "in": index, "out": 0}) + "\n")
            f.write(json.dumps({"ids": [], "in": self.totals[0], "out": self.totals[1]}) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, self.path)
        self.lines = len(entries) + 1
