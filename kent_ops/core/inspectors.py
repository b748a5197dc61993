"""What inspectors tell the engine: notes, acknowledgements, adjustments, checklist marks.

Inspector messages carry no ``seq``; the broker redelivers a QoS 1 message that was not
acknowledged (a crash) byte for byte, so the same inspector, kind and body (whose ``ts``
has milliseconds) is that redelivery, not a second acknowledgement. Everything here is
part of the engine's state and of the status it publishes.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime

import msgspec

from kent_ops.core import wire
from kent_ops.core.alerts import AlertBook
from kent_ops.core.checklist import ChecklistItem
from kent_ops.core.counting import Counting
from kent_ops.core.errors import Refused

__all__ = ["CLEAN_UP_ITEM", "NOTES_KEPT", "InspectorRecords"]

CLEAN_UP_ITEM = "F"
"""Clean-up binds after the assembly ends (permit:F): a mark on it is never a live breach;
the report weighs the marks made after the end against its deadline."""

NOTES_KEPT = 20
"""The status carries the latest notes only; the evidence log keeps every one."""


class InspectorRecords:
    """Notes, adjustments and checklist marks, as the status shows them."""

    def __init__(self, checklist: dict[str, ChecklistItem]) -> None:
        self.checklist = checklist
        self.notes: deque[wire.NoteEntry] = deque(maxlen=NOTES_KEPT)
        self.adjustments: list[wire.Adjustment] = []
        self.marks: dict[str, wire.ChecklistMark] = {}
        self.deficient: dict[str, str] = {}
        """Checklist items marked deficient, with the note: each holds facility-deficient
        (never item F: clean-up is weighed after the assembly, by the report)."""
        self._seen: set[tuple[str, str, bytes]] = set()

    def apply(
        self, who: str, kind: str, rec: wire.Record, at: datetime, book: AlertBook, counts: Counting
    ) -> str | None:
        """Take one inspector message; return a note if it changed nothing.

        Raises:
            Refused: an acknowledgement or note about an unknown alert, an unknown or
                inapplicable checklist item, a deficient mark without a note.
        """
        fingerprint = (who, kind, msgspec.json.encode(rec))
        if fingerprint in self._seen:
            return "duplicate: this inspector message was already recorded"
        self._seen.add(fingerprint)
        if isinstance(rec, wire.Ack):
            if not book.acknowledge(rec.alert, who, at, rec.comment):
                raise Refused(f"acknowledgement for unknown alert {rec.alert!r}")
        elif isinstance(rec, wire.Note):
            entry = wire.NoteEntry(by=who, at=at, text=rec.text, alert=rec.alert)
            if rec.alert is not None and not book.note(rec.alert, entry):
                raise Refused(f"note about unknown alert {rec.alert!r}")
            self.notes.append(entry)
        elif isinstance(rec, wire.Adjust):
            offset = counts.adjust(rec.attendance)
            self.adjustments.append(
                wire.Adjustment(
                    by=who, at=at, attendance=rec.attendance, offset=offset, reason=rec.reason
                )
            )
        elif isinstance(rec, wire.Inspection):
            self._mark(who, rec, at)
        else:  # pragma: no cover - decode() knows every kind
            raise Refused("unhandled message")
        return None

    def _mark(self, who: str, rec: wire.Inspection, at: datetime) -> None:
        if rec.item not in self.checklist:
            raise Refused(
                f"checklist item {rec.item!r} is unknown or does not apply to this permit"
            )
        if rec.result == "deficient":
            if not rec.note.strip():
                raise Refused("a deficient mark needs a note saying what was found")
            if rec.item != CLEAN_UP_ITEM:
                self.deficient[rec.item] = rec.note
        else:
            self.deficient.pop(rec.item, None)
        self.marks[rec.item] = wire.ChecklistMark(result=rec.result, by=who, at=at, note=rec.note)
