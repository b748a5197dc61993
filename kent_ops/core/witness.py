"""The witness file: the log's checkpoints as others received them, one JSON line each.

The aggregator publishes its evidence log's head (record number and hash) as the
retained ``kent/{e}/evidence/checkpoint``. A dashboard, a gate view, the notifier and
the phones' hub each keep every checkpoint they receive in a witness file, on their
own machine: a log cut back or rewritten at the command post is then contradicted by
copies that were never there (``kent-ops verify --witness``, and the ``verify.py`` of
a bundle for counsel, which reads this same format with Python's standard library).

This module is the format, pure (docs/protocol.md, "Witness files"): :func:`entry_line`
writes a line, :func:`read_witness` reads a file's bytes back into the checkpoints it
names, with every line it cannot use and why. The appending keeper is
:mod:`kent_ops.broker.witness`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "FORMAT",
    "WitnessRead",
    "Witnessed",
    "checkpoint_problem",
    "entry_line",
    "read_witness",
]

FORMAT = "kent-ops witness 1"
"""Every line's ``format``: a line of another format is not read."""

_HASH = re.compile(r"[0-9a-f]{64}")


def checkpoint_problem(payload: bytes) -> str | None:
    """Why ``payload`` is not a checkpoint a witness can keep; None when it is one.

    A checkpoint is a JSON object with an integer ``record`` of at least 1 and a
    ``hash`` of 64 lower-case hex digits; other fields are kept but not read.
    """
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "it is not JSON text"
    if not isinstance(data, dict):
        return "it is not a JSON object"
    record, digest = data.get("record"), data.get("hash")
    if type(record) is not int or record < 1:
        return "its record is not a whole number of at least 1"
    if not isinstance(digest, str) or not _HASH.fullmatch(digest):
        return "its hash is not 64 lower-case hex digits"
    return None


def entry_line(
    *, event: str, received_at: datetime, by: str, host: str, retained: bool, payload: bytes
) -> bytes:
    """One witness line: the checkpoint's bytes as received, and who received it when.

    Raises:
        ValueError: ``payload`` is not a checkpoint (:func:`checkpoint_problem`), or
            ``received_at`` has no UTC offset.
    """
    problem = checkpoint_problem(payload)
    if problem is not None:
        raise ValueError(f"not a checkpoint: {problem}")
    if received_at.tzinfo is None:
        raise ValueError("a witness's receive time must carry its UTC offset")
    entry = {
        "format": FORMAT,
        "event": event,
        "received_at": received_at.isoformat(timespec="microseconds"),
        "by": by,
        "host": host,
        "retained": retained,
        "payload": payload.decode("utf-8"),
    }
    return json.dumps(entry, separators=(",", ":")).encode("ascii") + b"\n"


@dataclass(frozen=True, slots=True)
class Witnessed:
    """One checkpoint a witness kept: the record and hash it names, and where it stands."""

    line: int
    record: int
    hash: str
    received_at: str
    by: str


@dataclass(slots=True)
class WitnessRead:
    """A witness file read: its checkpoints, and each line it could not use (line, why)."""

    entries: list[Witnessed] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)


def _line_problem(entry: object, event_id: str) -> str | None:
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return f"it is not a {FORMAT!r} line"
    if entry.get("event") != event_id:
        return f"it is a checkpoint of event {entry.get('event')!r}, not of {event_id!r}"
    if not all(isinstance(entry.get(k, ""), str) for k in ("received_at", "by", "host")):
        return "its received_at, by or host is not text"
    payload = entry.get("payload")
    if not isinstance(payload, str):
        return "its payload is not text"
    problem = checkpoint_problem(payload.encode("utf-8"))
    return None if problem is None else f"its payload is not a checkpoint: {problem}"


def read_witness(data: bytes, event_id: str) -> WitnessRead:
    """Every checkpoint of ``event_id`` in a witness file's bytes, in the file's order.

    A line that is not one (a line cut short by a power cut, another event's, another
    format) is listed in ``skipped`` with its number and why, never guessed at; empty
    lines are ignored.
    """
    read = WitnessRead()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            read.skipped.append((number, "it is not a line of JSON"))
            continue
        problem = _line_problem(entry, event_id)
        if problem is not None:
            read.skipped.append((number, problem))
            continue
        point = json.loads(entry["payload"])
        read.entries.append(
            Witnessed(
                number,
                point["record"],
                point["hash"],
                entry.get("received_at", ""),
                entry.get("by", ""),
            )
        )
    return read
