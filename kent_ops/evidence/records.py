"""The stored form of the evidence log: its records, its hash, its file, read-only access.

What the aggregator heard and did must stand up at a revocation hearing, so every
record carries the SHA-256 of its own content chained to the previous record's hash:
changing, inserting or removing a record anywhere breaks the chain from there on, and
``kent-ops verify`` names the first record that no longer matches. The chain is defined
once, in :func:`record_hash`; the writer (:mod:`kent_ops.evidence.log`), the one chain
walk (:mod:`kent_ops.evidence.chain`) and the replay all use it.

Record kinds (schema version 2):

- ``message``: an MQTT message as received (topic, raw payload bytes, accepted, reason).
  A message rejected for its size (over 64 KiB) is kept in part, as the proof of it
  rather than the flood itself: its first 1,024 bytes, and a reason that names its
  size and the SHA-256 of all of it (:func:`excerpt`); a replay takes it as the
  rejected message it was;
- ``tick``: the engine's time, written down: with the wall clock the service lets the
  engine's time pass (a tick) before it writes records of its own, and each such tick
  is logged as ``{"engine_time": "<ISO 8601, UTC, microseconds>"}``, the instant the
  engine then stood at, before the records that follow it in the same commit. A replay
  ticks its engine exactly there and nowhere else (see :mod:`kent_ops.evidence.replay`);
- ``alert``: an alert change (payload: the alert dict as JSON, its evidence hash filled);
- ``command``: a gate command (payload: ``{"gate": ..., "command": {...}}``);
- ``status``: a status snapshot (payload: the status dict as JSON);
- ``snapshot``: the engine's whole state at that point of the chain (payload: the JSON
  document of :mod:`kent_ops.core.snapshot`), every few minutes and at a clean stop; a
  restart starts from the last one and replays only the records after it;
- ``system``: the service's own life (payload: ``{"event": "opened" | "started" |
  "stopped" | "broker-connected" | "broker-disconnected" | "checkpoint" |
  "storage-error" | "permit-changed" | ..., ...details}``), one Struct per event in
  :mod:`kent_ops.evidence.system`, written and read only through it.

Version 1 logs had no ``tick`` records (a replay inferred the engine's time from the
times of the other records); the hash is computed the same way in both. Logs written
before oversized messages were kept in part hold them whole.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from kent_ops.core.errors import CheckFailed, UsageError

__all__ = [
    "COLUMNS",
    "EXCERPT_KEPT",
    "GENESIS_HASH",
    "KINDS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SELECT_FROM",
    "ChainBroken",
    "EvidenceError",
    "EvidenceRecord",
    "EvidenceWriteError",
    "Excerpt",
    "connect_ro",
    "count_records",
    "excerpt",
    "format_time",
    "json_bytes",
    "read_meta",
    "read_records",
    "record_hash",
    "require_sqlite",
]

SCHEMA_VERSION = "2"
GENESIS_HASH = "0" * 64
KINDS = frozenset({"message", "tick", "alert", "command", "status", "snapshot", "system"})
EXCERPT_KEPT = 1024
"""How many of an oversized payload's first bytes its record keeps."""
OVERSIZED = "payload of "
"""How the reason of a message rejected for its size (and only of one) begins."""
_KEPT = re.compile(
    r"payload of (?P<size>[0-9,]+) bytes is over the 64 KiB limit; the log keeps its first "
    r"[0-9,]+ bytes and the SHA-256 of all of it, (?P<sha256>[0-9a-f]{64})"
)
SQLITE_MAGIC = b"SQLite format 3\x00"

# Domain separation: a hash of this chain can never be mistaken for another format's.
# (Unchanged since version 1: the records' meaning changed, not their encoding.)
_HASH_PREFIX = b"kent-ops evidence v1\n"
_NONE = b"\x00"
_PRESENT = b"\x01"

COLUMNS = (
    ("id", "INTEGER", False, True),
    ("kind", "TEXT", True, False),
    ("received_at", "TEXT", True, False),
    ("topic", "TEXT", False, False),
    ("payload", "BLOB", True, False),
    ("accepted", "INTEGER", False, False),
    ("reason", "TEXT", False, False),
    ("hash", "TEXT", True, False),
)
"""The ``records`` table's columns: (name, declared type, NOT NULL, primary key)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    received_at TEXT NOT NULL,
    topic TEXT,
    payload BLOB NOT NULL,
    accepted INTEGER,
    reason TEXT,
    hash TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS records_no_update BEFORE UPDATE ON records
BEGIN SELECT RAISE(ABORT, 'evidence records are append-only: no UPDATE'); END;
CREATE TRIGGER IF NOT EXISTS records_no_delete BEFORE DELETE ON records
BEGIN SELECT RAISE(ABORT, 'evidence records are append-only: no DELETE'); END;
CREATE TRIGGER IF NOT EXISTS meta_no_update BEFORE UPDATE ON meta
BEGIN SELECT RAISE(ABORT, 'evidence meta is fixed at creation: no UPDATE'); END;
CREATE TRIGGER IF NOT EXISTS meta_no_delete BEFORE DELETE ON meta
BEGIN SELECT RAISE(ABORT, 'evidence meta is fixed at creation: no DELETE'); END;
"""

SELECT_FROM = (
    "SELECT id, kind, received_at, topic, payload, accepted, reason, hash "
    "FROM records WHERE id >= ? AND id <= ? ORDER BY id"
)
"""Stored rows from one id to another, in id order: every reader streams this."""


class EvidenceError(UsageError):
    """A file that cannot be used as this event's evidence log (exit 2)."""


class ChainBroken(CheckFailed):
    """The chain does not verify at ``record`` (exit 1).

    ``problem`` says what is wrong with that record in words that follow
    ``FAIL record N:``; the message is the whole sentence.
    """

    def __init__(self, message: str, record: int | None, problem: str | None = None) -> None:
        super().__init__(message)
        self.record = record
        self.problem = problem or message


class EvidenceWriteError(Exception):
    """A commit that did not reach the disk (disk full, read-only, I/O error).

    Nothing of the failed batch is durable: the caller must roll back and must not
    acknowledge or act on the batch's messages.
    """


class EvidenceRecord(msgspec.Struct, frozen=True):
    """One record as stored; ``received_at`` is UTC and timezone-aware.

    A replay's record (:class:`kent_ops.evidence.replay.Replayed`) is this and what the
    replay made of it.
    """

    id: int
    kind: str
    received_at: datetime
    topic: str | None
    payload: bytes
    accepted: bool | None
    reason: str | None
    hash: str


def format_time(t: datetime) -> str:
    """The stored form of a time: UTC, ISO 8601, always with microseconds.

    One fixed form, because the text itself is hashed: the same instant must always be
    written the same way.
    """
    if t.tzinfo is None:
        raise ValueError("evidence times must be timezone-aware")
    return t.astimezone(UTC).isoformat(timespec="microseconds")


def json_bytes(obj: Any) -> bytes:
    """Canonical JSON for ``tick``/``alert``/``command``/``status``/``system`` payloads."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def excerpt(payload: bytes, reason: str) -> tuple[bytes, str]:
    """What the log stores of a payload rejected for its size: the proof, not the flood.

    Its first bytes, and the reason (which names its size) with the SHA-256 of all of
    it: whoever holds the payload can prove it is the one received, and no client can
    make the log as large as what it sends.
    """
    kept = payload[:EXCERPT_KEPT]
    digest = hashlib.sha256(payload).hexdigest()
    kept_words = f"the log keeps its first {len(kept):,} bytes and the SHA-256 of all of it"
    return kept, f"{reason}; {kept_words}, {digest}"


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A rejected message the log keeps in part: its size, its SHA-256, its first bytes."""

    size: int
    sha256: str
    first: bytes

    @classmethod
    def parse(cls, payload: bytes, reason: str | None) -> Excerpt | None:
        """The excerpt a stored message is, or None if it is whole."""
        found = _KEPT.fullmatch(reason or "")
        if found is None:
            return None
        return cls(int(found["size"].replace(",", "")), found["sha256"], payload)


def _field(value: bytes | None) -> bytes:
    if value is None:
        return _NONE
    return _PRESENT + len(value).to_bytes(8, "big") + value


def record_hash(
    prev_hash: str,
    record_id: int,
    kind: str,
    received_at: str,
    topic: str | None,
    payload: bytes,
    accepted: bool | int | None,
    reason: str | None,
) -> str:
    """THE definition of the chain: SHA-256 of the previous hash and every field.

    Each field is length-prefixed (or marked absent), so no two different records can
    encode to the same bytes. ``received_at`` is the stored text (:func:`format_time`).
    The first record's previous hash is :data:`GENESIS_HASH`.
    """
    h = hashlib.sha256(_HASH_PREFIX)
    h.update(prev_hash.encode("ascii"))
    h.update(record_id.to_bytes(8, "big"))
    h.update(_field(kind.encode()))
    h.update(_field(received_at.encode()))
    h.update(_field(None if topic is None else topic.encode()))
    h.update(_field(payload))
    h.update(_field(None if accepted is None else (b"1" if accepted else b"0")))
    h.update(_field(None if reason is None else reason.encode()))
    return h.hexdigest()


def require_sqlite(path: Path) -> None:
    """Refuse, in one sentence, a path that is not an SQLite file."""
    if not path.exists():
        raise EvidenceError(f"{path}: no such file")
    if path.is_dir():
        raise EvidenceError(f"{path} is a folder, not an evidence log")
    with path.open("rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise EvidenceError(f"{path} is not an SQLite evidence log")


def connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection; WAL lets it read while the aggregator writes."""
    require_sqlite(path)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise EvidenceError(f"{path} cannot be read as an SQLite file ({exc})") from None
    if not {"records", "meta"} <= tables:
        conn.close()
        raise EvidenceError(f"{path} is an SQLite file but not a kent-ops evidence log")
    return conn


def read_meta(path: str | Path) -> dict[str, str]:
    """The file's meta table: event_id, permit_sha256, schema_version, created_at."""
    conn = connect_ro(Path(path))
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


def read_records(path: str | Path, start: int = 1) -> Iterator[EvidenceRecord]:
    """Every record from id ``start`` on, in id order, streamed (not loaded at once).

    Reading does not verify: :func:`kent_ops.evidence.chain.verify` does.
    """
    conn = connect_ro(Path(path))
    parse = datetime.fromisoformat
    try:
        cur = conn.execute(SELECT_FROM, (start, 2**62))
        while True:
            rows = cur.fetchmany(4096)
            if not rows:
                return
            for rid, kind, at, topic, payload, accepted, reason, digest in rows:
                yield EvidenceRecord(
                    rid,
                    kind,
                    parse(at),
                    topic,
                    payload,
                    None if accepted is None else accepted == 1,
                    reason,
                    digest,
                )
    finally:
        conn.close()


def count_records(path: str | Path) -> int:
    """How many records the file holds (committed ones)."""
    conn = connect_ro(Path(path))
    try:
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    finally:
        conn.close()
