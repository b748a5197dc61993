"""The evidence log's writer: one append-only, hash-chained SQLite file per event.

The stored form (record kinds, the hash, the table layout) is in
:mod:`kent_ops.evidence.records`; the one chain walk that checks a log is in
:mod:`kent_ops.evidence.chain`. This module writes: it creates a file, or continues one
after walking its whole chain, appends records in batches and commits each batch in one
fsynced transaction. Checkpoints (the head's id and hash) are published over MQTT by
the service, so anyone who kept one can also prove the log was not cut short or
rewritten wholesale after the fact.

The names of both other modules are re-exported here, where callers have always found them.
"""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kent_ops.evidence.chain import ChainWalk, VerifyResult, check_layout, check_meta, verify
from kent_ops.evidence.records import (
    GENESIS_HASH,
    KINDS,
    SCHEMA,
    SCHEMA_VERSION,
    ChainBroken,
    EvidenceError,
    EvidenceRecord,
    EvidenceWriteError,
    count_records,
    format_time,
    json_bytes,
    read_meta,
    read_records,
    record_hash,
    require_sqlite,
)
from kent_ops.evidence.system import Opened, PermitChanged, SystemRecord, encode_system

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
    "count_records",
    "format_time",
    "json_bytes",
    "read_meta",
    "read_records",
    "record_hash",
    "verify",
]


def _quote(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


class EvidenceLog:
    """The append-only writer. One per file; the aggregator's worker thread owns it.

    Appends are held in memory until :meth:`commit` writes them in one transaction
    (batching is what makes ~100k records/s possible); ``head`` and :meth:`hash_of`
    include them already, so the caller knows each record's id before it appends it
    and can cite any record's hash at once.

    Durability: WAL mode with ``synchronous=FULL``, so each commit is fsynced before it
    returns. The aggregator acknowledges a message to the broker only after its
    commit, and the broker then forgets it: with ``NORMAL`` a power cut (a field laptop
    on a generator) could lose a committed, acknowledged batch. Commits are batched
    (tens of milliseconds), so the fsync per commit is affordable.
    """

    def __init__(
        self, path: Path, conn: sqlite3.Connection, count: int, head: str, *, verified: bool = True
    ) -> None:
        self.path = path
        self.verified = verified
        """False when continued on trust (``open(verify=False)``): verify it elsewhere."""
        self._conn = conn
        self._count = count
        self._head = head
        self._committed = (count, head)
        self._pending: list[tuple[Any, ...]] = []
        self.meta: dict[str, str] = dict(conn.execute("SELECT key, value FROM meta").fetchall())

    @classmethod
    def open(
        cls, path: str | Path, *, event_id: str, permit_sha256: str, verify: bool = True
    ) -> EvidenceLog:
        """Create the file, or continue an existing one after verifying its whole chain.

        ``verify=False`` continues from the stored head without walking the chain (a
        long log takes minutes): the caller then verifies it elsewhere (the aggregator,
        in a second process while it serves) and ``verified`` stays False.

        Raises :class:`EvidenceError` for a file that is not an evidence log, belongs
        to another event, was written with another schema version or declares other
        field types; :class:`ChainBroken` naming the first bad record.
        """
        path = Path(path)
        fresh = not path.exists() or path.stat().st_size == 0
        if not fresh:
            require_sqlite(path)
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise EvidenceError(f"{path} cannot be opened ({exc})") from None
        try:
            log = cls._open(conn, path, event_id, permit_sha256, verify)
        except BaseException:
            conn.close()
            raise
        return log

    @classmethod
    def _open(
        cls, conn: sqlite3.Connection, path: Path, event_id: str, permit_sha256: str, verify: bool
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
            return cls._create(conn, path, event_id, permit_sha256)
        log = cls._continue(conn, path, event_id, verify)
        if log.meta.get("permit_sha256") != permit_sha256:
            changed = PermitChanged(
                permit_sha256=permit_sha256, opened_with=log.meta.get("permit_sha256")
            )
            log.append_system(datetime.now(UTC), changed)
            log.commit()
        return log

    @classmethod
    def _create(
        cls, conn: sqlite3.Connection, path: Path, event_id: str, permit_sha256: str
    ) -> EvidenceLog:
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
        conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\n{inserts}COMMIT;\n")
        log = cls(path, conn, 0, GENESIS_HASH)
        log.append_system(now, Opened(event_id=event_id, permit_sha256=permit_sha256))
        log.commit()
        return log

    @classmethod
    def _continue(
        cls, conn: sqlite3.Connection, path: Path, event_id: str, verify: bool
    ) -> EvidenceLog:
        """Check the meta table and the layout, then walk the whole chain to its head."""
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        check_meta(path, meta, event_id)
        check_layout(path, conn)
        if not verify:
            try:
                last = conn.execute("SELECT id, hash FROM records ORDER BY id DESC LIMIT 1")
                row = last.fetchone()
            except sqlite3.DatabaseError as exc:
                raise EvidenceError(f"{path} cannot be read ({exc})") from None
            count, head = (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))
            return cls(path, conn, count, head, verified=False)
        walk = ChainWalk(conn)
        try:
            for _ in walk.batches():
                pass
        except ChainBroken as exc:
            raise ChainBroken(
                f"{path} does not verify: record {exc.record}: {exc.problem}",
                exc.record,
                exc.problem,
            ) from None
        except sqlite3.DatabaseError as exc:
            bad = walk.count + 1
            problem = f"the file is damaged here ({exc})"
            raise ChainBroken(f"{path} does not verify: record {bad}: {problem}", bad) from None
        return cls(path, conn, walk.count, walk.head)

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

    def hash_of(self, record_id: int) -> str | None:
        """The hash of record ``record_id``, committed or still pending; None if absent.

        The service fills each alert's ``evidence.hash`` from here when it logs or
        publishes the alert (the engine cites the record id only).
        """
        committed = self._committed[0]
        if committed < record_id <= self._count:
            return str(self._pending[record_id - committed - 1][7])
        if not 1 <= record_id <= committed:
            return None
        row = self._conn.execute("SELECT hash FROM records WHERE id = ?", (record_id,)).fetchone()
        return None if row is None else str(row[0])

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

    def append_system(self, received_at: datetime, record: SystemRecord) -> tuple[int, str]:
        """Append one of the service's own records: the one way they are written."""
        return self.append("system", received_at, payload=encode_system(record))

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
