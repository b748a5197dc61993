"""The one chain walk: every reader that trusts the log walks it here.

``kent-ops verify``, the replay (the report and a restarted aggregator) and
:meth:`kent_ops.evidence.log.EvidenceLog.open` continuing a file all read the stored
rows through :class:`ChainWalk`, which checks, record by record, that the ids run on
from 1 without a gap, that every field holds a value of its type, that the stored hash
is the one :func:`~kent_ops.evidence.records.record_hash` computes from the previous
hash and the record, and that record 1 is the log's opening record for the event the
meta table names. It stops at the first record that fails with
:class:`~kent_ops.evidence.records.ChainBroken`, so nothing a tampered record says
reaches a caller. The meta table itself is checked by :func:`check_meta` (event,
schema version) and :func:`check_layout` (the records table's field types).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kent_ops.evidence.records import (
    COLUMNS,
    GENESIS_HASH,
    SCHEMA_VERSION,
    SELECT_FROM,
    ChainBroken,
    EvidenceError,
    connect_ro,
    record_hash,
)
from kent_ops.evidence.system import Opened, decode_system

__all__ = ["ChainWalk", "Row", "VerifyResult", "check_layout", "check_meta", "verify"]

Row = tuple[int, Any, Any, Any, Any, Any, Any, Any]
"""A stored row: (id, kind, received_at text, topic, payload, accepted, reason, hash)."""

_ACCEPTED = (None, 0, 1)
_FETCH = 8192


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The outcome of recomputing a whole chain."""

    ok: bool
    count: int
    head_hash: str
    first_bad: int | None = None
    problem: str | None = None
    hashes: dict[int, str] = field(default_factory=dict)
    """The stored hash of each record asked for (``want``) that the chain holds; to be
    trusted only when ``ok``."""

    def line(self) -> str:
        """The one line ``kent-ops verify`` prints."""
        if self.ok:
            return f"OK {self.count} {self.head_hash}"
        return f"FAIL record {self.first_bad}: {self.problem}"


class ChainWalk:
    """Stream a log's rows in id order, checking each one before it is handed out.

    Iterate :meth:`batches` (lists of rows, the fast path for the replay) or
    :meth:`rows`. ``count`` and ``head`` are always those of the last good record, so a
    caller that catches :class:`ChainBroken` (or a damaged file's
    ``sqlite3.DatabaseError``) knows where the chain stood. ``verify=False`` hands the
    rows out unchecked, for a caller that verified the chain elsewhere.

    Args:
        conn: a connection to the log (read-only, or the writer's own).
        verify: check every record; False only reads.
        until: stop after this record id (a log still being written is read up to a
            fixed point); None reads to the end.
        after: start after this (record id, stored hash) rather than at record 1: the
            rows from there on are checked against that hash, taken on trust (a restart
            from an engine snapshot; the whole chain is verified elsewhere).
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        verify: bool = True,
        until: int | None = None,
        after: tuple[int, str] = (0, GENESIS_HASH),
    ) -> None:
        self._conn = conn
        self.verifies = verify
        self._until = until if until is not None else 2**62
        self.meta: dict[str, str] = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        self.count, self.head = after

    def rows(self) -> Iterator[Row]:
        """Every row, one at a time."""
        for batch in self.batches():
            yield from batch

    def batches(self) -> Iterator[list[Row]]:
        """Every row, a few thousand at a time, each batch checked before it is yielded."""
        cur = self._conn.execute(SELECT_FROM, (self.count + 1, self._until))
        while True:
            rows = cur.fetchmany(_FETCH)
            if not rows:
                return
            if self.verifies:
                self._check(rows)
            else:
                self.count = rows[-1][0]
                self.head = rows[-1][7]
            yield rows

    def _check(self, rows: list[Row]) -> None:
        prev = self.head
        expected = self.count + 1
        try:
            for rid, kind, at, topic, payload, accepted, reason, digest in rows:
                if rid != expected:
                    raise ChainBroken(
                        f"record {expected} is missing (the next stored is {rid})",
                        expected,
                        "the record is missing",
                    )
                if not (
                    type(kind) is str
                    and type(at) is str
                    and type(payload) is bytes
                    and (topic is None or type(topic) is str)
                    and (reason is None or type(reason) is str)
                    and accepted in _ACCEPTED  # 2 would hash as 1: the value must be exact
                ):
                    raise ChainBroken(
                        f"record {rid} holds a value of the wrong type",
                        rid,
                        "a field holds a value of the wrong type",
                    )
                computed = record_hash(prev, rid, kind, at, topic, payload, accepted, reason)
                if computed != digest:
                    shown = f"(computed {computed[:16]}…, stored {str(digest)[:16]}…)"
                    raise ChainBroken(
                        f"record {rid} does not match its hash: it was changed, or the record "
                        f"before it was rewritten {shown}",
                        rid,
                        f"its content does not match its hash {shown}",
                    )
                if rid == 1:
                    problem = _opening_problem(kind, payload, self.meta)
                    if problem:
                        raise ChainBroken(f"record 1: {problem}", 1, problem)
                prev = digest
                expected = rid + 1
        finally:  # where the chain stands: after the last record that passed
            self.count = expected - 1
            self.head = prev


def _opening_problem(kind: str, payload: bytes, meta: dict[str, str]) -> str | None:
    """Record 1 must open the log for the event the meta table names."""
    not_opening = "the first record is not the log's opening record"
    if kind != "system":
        return not_opening
    try:
        opened = decode_system(payload)
    except msgspec.ValidationError:
        return not_opening
    except msgspec.DecodeError:
        return "the opening record is not JSON"
    if not isinstance(opened, Opened):
        return not_opening
    for key, value in (("event_id", opened.event_id), ("permit_sha256", opened.permit_sha256)):
        if value != meta.get(key):
            return f"the meta table's {key} differs from the opening record's"
    return None


def check_meta(path: Path, meta: dict[str, str], event_id: str | None = None) -> None:
    """Refuse a log of another event, or of another schema version, in one sentence."""
    if event_id is not None and meta.get("event_id") != event_id:
        raise EvidenceError(
            f"{path} is the evidence log of event {meta.get('event_id')!r}, not of {event_id!r}"
        )
    theirs = meta.get("schema_version")
    if theirs != SCHEMA_VERSION:
        raise EvidenceError(
            f"{path} is an evidence log of schema version {theirs}; "
            f"this kent-ops reads and writes version {SCHEMA_VERSION} only"
        )


def check_layout(path: Path, conn: sqlite3.Connection) -> None:
    """Refuse a file whose ``records`` table does not declare our fields and types."""
    found = tuple(
        (name, str(declared).upper(), bool(notnull), bool(pk))
        for _, name, declared, notnull, _, pk in conn.execute("PRAGMA table_info(records)")
    )
    if found != COLUMNS:
        raise EvidenceError(
            f"{path} has a records table whose fields or field types are not an evidence log's"
        )


def verify(path: str | Path, want: Collection[int] = ()) -> VerifyResult:
    """Recompute the whole chain, streaming; name the first record that does not match.

    ``want``: record ids whose hashes to hand back in ``hashes`` (those the verified
    part of the chain holds), read in the same pass and the same read transaction, so
    they are the hashes of the very chain that was checked (a checkpoint's or the head
    file's record, compared by :mod:`kent_ops.evidence.claims`).

    Raises :class:`~kent_ops.evidence.records.EvidenceError` when the file is missing or
    not an evidence log. Any schema version verifies: the hash has not changed.
    """
    conn = connect_ro(Path(path))
    walk: ChainWalk | None = None
    wanted = set(want)
    hashes: dict[int, str] = {}
    try:
        walk = ChainWalk(conn)
        for rows in walk.batches():
            if wanted and rows[0][0] <= max(wanted) and rows[-1][0] >= min(wanted):
                hashes.update((r[0], r[7]) for r in rows if r[0] in wanted)
    except ChainBroken as exc:
        assert walk is not None
        return VerifyResult(False, walk.count, walk.head, exc.record, exc.problem, hashes)
    except sqlite3.DatabaseError as exc:
        count, head = (walk.count, walk.head) if walk is not None else (0, GENESIS_HASH)
        problem = f"the file is damaged here ({exc})"
        return VerifyResult(False, count, head, count + 1, problem, hashes)
    finally:
        conn.close()
    return VerifyResult(True, walk.count, walk.head, hashes=hashes)
