"""The evidence log (SPEC 6): one append-only, hash-chained SQLite file per event.

What the aggregator heard and did must stand up at a revocation hearing, so every
record carries the SHA-256 of its own content chained to the previous record's hash:
changing, inserting or removing a record anywhere breaks the chain from there on, and
``kent-ops verify`` names the first record that no longer matches. Checkpoints (the
head's id and hash) are published over MQTT, so anyone who kept one can also prove the
log was not cut short or rewritten wholesale after the fact.

The chain is defined once, in :func:`record_hash`; the writer, the verifier and the
report all use it.

Record kinds:

- ``message``: an MQTT message as received (topic, raw payload bytes, accepted, reason);
- ``alert``: an alert change (payload: the alert dict as JSON);
- ``command``: a gate command (payload: ``{"gate": ..., "command": {...}}``);
- ``status``: a status snapshot (payload: the status dict as JSON);
- ``system``: the service's own life (payload: ``{"event": "opened" | "started" |
  "stopped" | "broker-connected" | "broker-disconnected" | "checkpoint" |
  "storage-error" | "permit-changed" | ..., ...details}``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kent_ops.core.errors import CheckFailed, UsageError

__all__ = [
    "GENESIS_HASH",
    "KINDS",
    "SCHEMA_VERSION",
    "ChainBroken",
    "EvidenceError",
    "EvidenceLog",
    "EvidenceRecord",
    "EvidenceWriteError",
    "VerifyResult",
    "cli_verify",
    "count_records",
    "format_time",
    "json_bytes",
    "read_meta",
    "read_records",
    "record_hash",
    "verify",
]

SCHEMA_VERSION = "1"
GENESIS_HASH = "0" * 64
KINDS = frozenset({"message", "alert", "command", "status", "system"})
SQLITE_MAGIC = b"SQLite format 3\x00"

# Domain separation: a hash of this chain can never be mistaken for another format's.
_HASH_PREFIX = b"kent-ops evidence v1\n"
_NONE = b"\x00"
_PRESENT = b"\x01"

_SCHEMA = """
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

_SELECT = (
    "SELECT id, kind, received_at, topic, payload, accepted, reason, hash "
    "FROM records WHERE id >= ? ORDER BY id"
)


class EvidenceError(UsageError):
    """A file that cannot be used as this event's evidence log (exit 2)."""


class ChainBroken(CheckFailed):
    """The chain does not verify; the message names the first bad record (exit 1)."""

    def __init__(self, message: str, record: int | None) -> None:
        super().__init__(message)
        self.record = record


class EvidenceWriteError(Exception):
    """A commit that did not reach the disk (disk full, read-only, I/O error).

    Nothing of the failed batch is durable: the caller must :meth:`EvidenceLog.rollback`
    and must not acknowledge or act on the batch's messages.
    """


@dataclass(frozen=True, slots=True)
class EvidenceRecord:
    """One record as stored; ``received_at`` is UTC and timezone-aware."""

    id: int
    kind: str
    received_at: datetime
    topic: str | None
    payload: bytes
    accepted: bool | None
    reason: str | None
    hash: str


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The outcome of recomputing a whole chain."""

    ok: bool
    count: int
    head_hash: str
    first_bad: int | None = None
    problem: str | None = None

    def line(self) -> str:
        """The one line ``kent-ops verify`` prints."""
        if self.ok:
            return f"OK {self.count} {self.head_hash}"
        return f"FAIL record {self.first_bad}: {self.problem}"


def format_time(t: datetime) -> str:
    """The stored form of a time: UTC, ISO 8601, always with microseconds.

    One fixed form, because the text itself is hashed: the same instant must always be
    written the same way.
    """
    if t.tzinfo is None:
        raise ValueError("evidence times must be timezone-aware")
    return t.astimezone(UTC).isoformat(timespec="microseconds")


def json_bytes(obj: Any) -> bytes:
    """Canonical JSON for ``alert``/``command``/``status``/``system`` payloads."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


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


def _quote(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _check_is_sqlite(path: Path) -> None:
    if not path.exists():
        raise EvidenceError(f"{path}: no such file")
    if path.is_dir():
        raise EvidenceError(f"{path} is a folder, not an evidence log")
    with path.open("rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise EvidenceError(f"{path} is not an SQLite evidence log")


def _connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection; WAL lets it read while the aggregator writes."""
    _check_is_sqlite(path)
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
    conn = _connect_ro(Path(path))
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


def read_records(path: str | Path, start: int = 1) -> Iterator[EvidenceRecord]:
    """Every record from id ``start`` on, in id order, streamed (not loaded at once).

    Reading does not verify: call :func:`verify` for that.
    """
    conn = _connect_ro(Path(path))
    parse = datetime.fromisoformat
    try:
        cur = conn.execute(_SELECT, (start,))
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
    conn = _connect_ro(Path(path))
    try:
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    finally:
        conn.close()


def _verify_conn(conn: sqlite3.Connection) -> VerifyResult:
    prev = GENESIS_HASH
    expected_id = 1
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        cur = conn.execute(_SELECT, (1,))
        while True:
            rows = cur.fetchmany(4096)
            if not rows:
                break
            for rid, kind, at, topic, payload, accepted, reason, digest in rows:
                if rid != expected_id:
                    return VerifyResult(
                        False, expected_id - 1, prev, expected_id, "the record is missing"
                    )
                if (
                    not isinstance(kind, str)
                    or not isinstance(at, str)
                    or not isinstance(payload, bytes)
                    or not (topic is None or isinstance(topic, str))
                    or not (reason is None or isinstance(reason, str))
                    or accepted not in (None, 0, 1)
                ):
                    return VerifyResult(
                        False, rid - 1, prev, rid, "a field holds a value of the wrong type"
                    )
                computed = record_hash(prev, rid, kind, at, topic, payload, accepted, reason)
                if computed != digest:
                    return VerifyResult(
                        False,
                        rid - 1,
                        prev,
                        rid,
                        f"its content does not match its hash (computed {computed[:16]}…, "
                        f"stored {str(digest)[:16]}…)",
                    )
                if rid == 1:
                    problem = _check_opened(kind, payload, meta)
                    if problem:
                        return VerifyResult(False, 0, GENESIS_HASH, 1, problem)
                prev = digest
                expected_id += 1
    except sqlite3.DatabaseError as exc:
        return VerifyResult(
            False, expected_id - 1, prev, expected_id, f"the file is damaged here ({exc})"
        )
    return VerifyResult(True, expected_id - 1, prev)


def _check_opened(kind: str, payload: bytes, meta: dict[str, str]) -> str | None:
    """Record 1 must open the log for the event the meta table names."""
    if kind != "system":
        return "the first record is not the log's opening record"
    try:
        opened = json.loads(payload)
    except ValueError:
        return "the opening record is not JSON"
    if not isinstance(opened, dict) or opened.get("event") != "opened":
        return "the first record is not the log's opening record"
    for key in ("event_id", "permit_sha256"):
        if opened.get(key) != meta.get(key):
            return f"the meta table's {key} differs from the opening record's"
    return None


def verify(path: str | Path) -> VerifyResult:
    """Recompute the whole chain, streaming; name the first record that does not match.

    Raises :class:`EvidenceError` when the file is missing or not an evidence log.
    """
    conn = _connect_ro(Path(path))
    try:
        return _verify_conn(conn)
    finally:
        conn.close()


class EvidenceLog:
    """The append-only writer. One per file; the aggregator's worker thread owns it.

    Appends are held in memory until :meth:`commit` writes them in one transaction
    (batching is what makes ~100k records/s possible); ``head`` includes them already,
    so the caller can hand each record's id and hash to the engine at once.

    Durability: WAL mode with ``synchronous=FULL``, so each commit is fsynced before it
    returns. The aggregator acknowledges a message to the broker only after its
    commit, and the broker then forgets it: with ``NORMAL`` a power cut (a field laptop
    on a generator) could lose a committed, acknowledged batch. Commits are batched
    (tens of milliseconds), so the fsync per commit is affordable.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, count: int, head: str) -> None:
        self.path = path
        self._conn = conn
        self._count = count
        self._head = head
        self._committed = (count, head)
        self._pending: list[tuple[Any, ...]] = []
        self.meta: dict[str, str] = dict(conn.execute("SELECT key, value FROM meta").fetchall())

    @classmethod
    def open(cls, path: str | Path, *, event_id: str, permit_sha256: str) -> EvidenceLog:
        """Create the file, or continue an existing one after verifying its whole chain.

        Raises :class:`EvidenceError` for a file that is not an evidence log or belongs
        to another event, :class:`ChainBroken` naming the first bad record.
        """
        path = Path(path)
        fresh = not path.exists() or path.stat().st_size == 0
        if not fresh:
            _check_is_sqlite(path)
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise EvidenceError(f"{path} cannot be opened ({exc})") from None
        try:
            log = cls._open(conn, path, event_id, permit_sha256)
        except BaseException:
            conn.close()
            raise
        return log

    @classmethod
    def _open(
        cls, conn: sqlite3.Connection, path: Path, event_id: str, permit_sha256: str
    ) -> EvidenceLog:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            raise EvidenceError(f"{path} cannot be used as an evidence log ({exc})") from None
        if tables and not {"records", "meta"} <= tables:
            raise EvidenceError(f"{path} is an SQLite file but not a kent-ops evidence log")
        if not tables:
            now = datetime.now(UTC)
            meta = {
                "event_id": event_id,
                "permit_sha256": permit_sha256,
                "schema_version": SCHEMA_VERSION,
                "created_at": format_time(now),
            }
            # One script, one transaction: a crash leaves either no tables or all of them
            # with their meta. (executescript cannot take parameters, hence the quoting.)
            inserts = "".join(
                f"INSERT INTO meta (key, value) VALUES ({_quote(k)}, {_quote(v)});\n"
                for k, v in meta.items()
            )
            conn.executescript(f"BEGIN IMMEDIATE;\n{_SCHEMA}\n{inserts}COMMIT;\n")
            log = cls(path, conn, 0, GENESIS_HASH)
            log.append_json(
                "system",
                now,
                {"event": "opened", "event_id": event_id, "permit_sha256": permit_sha256},
            )
            log.commit()
            return log
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("event_id") != event_id:
            raise EvidenceError(
                f"{path} is the evidence log of event {meta.get('event_id')!r}, not of {event_id!r}"
            )
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise EvidenceError(
                f"{path} has evidence schema version {meta.get('schema_version')!r}; "
                f"this kent-ops writes version {SCHEMA_VERSION}"
            )
        result = _verify_conn(conn)
        if not result.ok:
            raise ChainBroken(
                f"{path} does not verify: record {result.first_bad}: {result.problem}",
                result.first_bad,
            )
        log = cls(path, conn, result.count, result.head_hash)
        if meta.get("permit_sha256") != permit_sha256:
            log.append_json(
                "system",
                datetime.now(UTC),
                {
                    "event": "permit-changed",
                    "permit_sha256": permit_sha256,
                    "opened_with": meta.get("permit_sha256"),
                },
            )
            log.commit()
        return log

    @property
    def head(self) -> tuple[int, str]:
        """(record count, head hash), including appends not yet committed."""
        return self._count, self._head

    @property
    def committed_head(self) -> tuple[int, str]:
        """(record count, head hash) of what is on disk."""
        return self._committed

    @property
    def pending(self) -> int:
        """How many appends wait for :meth:`commit`."""
        return len(self._pending)

    def append(
        self,
        kind: str,
        received_at: datetime,
        *,
        topic: str | None = None,
        payload: bytes = b"",
        accepted: bool | None = None,
        reason: str | None = None,
    ) -> tuple[int, str]:
        """Add one record to the open batch; return its (id, hash). Durable after commit."""
        if kind not in KINDS:
            raise ValueError(f"unknown evidence kind {kind!r}")
        rid = self._count + 1
        at = format_time(received_at)
        payload = bytes(payload)
        acc = None if accepted is None else int(bool(accepted))
        digest = record_hash(self._head, rid, kind, at, topic, payload, acc, reason)
        self._pending.append((rid, kind, at, topic, payload, acc, reason, digest))
        self._count = rid
        self._head = digest
        return rid, digest

    def append_json(self, kind: str, received_at: datetime, obj: Any) -> tuple[int, str]:
        """Append a record whose payload is ``obj`` as canonical JSON."""
        return self.append(kind, received_at, payload=json_bytes(obj))

    def commit(self) -> None:
        """Write the open batch in one transaction; durable when this returns.

        Raises :class:`EvidenceWriteError` if the disk refuses; the batch then stays
        pending and the caller must :meth:`rollback`.
        """
        if not self._pending:
            return
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT INTO records (id, kind, received_at, topic, payload, accepted, reason, "
                "hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                self._pending,
            )
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise EvidenceWriteError(f"could not commit to {self.path}: {exc}") from exc
        self._pending.clear()
        self._committed = (self._count, self._head)

    def rollback(self) -> None:
        """Drop the appends not yet committed: the head goes back to what is on disk."""
        self._pending.clear()
        self._count, self._head = self._committed

    def close(self) -> None:
        """Close the file (uncommitted appends are dropped; commit first)."""
        self.rollback()
        self._conn.close()

    def __enter__(self) -> EvidenceLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cli_verify(args: argparse.Namespace) -> int:
    """``kent-ops verify E``: ``OK <records> <head hash>`` (0) or the first bad record (1)."""
    path = Path(args.evidence)
    result = verify(path)  # EvidenceError: one sentence, exit 2, via cli.main
    sys.stdout.write(result.line() + "\n")
    return 0 if result.ok else 1
