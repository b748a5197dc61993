"""Replay an evidence log through the engine: the one way a log becomes a state again.

The post-event report and a restarted aggregator both rebuild what the live service
knew by feeding the log's ``message`` records, in order, to a fresh
:class:`~kent_ops.core.engine.Engine`, exactly as the service fed them: every message with
its topic, raw payload, receive time and record id (then its record's hash), and, with
the wall clock, a tick at the time of every other record, because the live service
ticked its engine before writing those. One function does it, so the report cannot
disagree with what inspectors saw.

The log is streamed (a three-day festival holds millions of records), and the chain is
verified in the same pass: each record's hash is recomputed with
:func:`kent_ops.evidence.log.record_hash` before the record is fed, and the replay stops at
the first record that does not match with :class:`~kent_ops.evidence.log.ChainBroken`, so
nothing a tampered record says ever reaches a result. This module is pure of MQTT and
Textual; it reads SQLite only through the evidence module's read-only connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, NamedTuple

from kent_ops.core.engine import Clock, Engine, FeedResult
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit
from kent_ops.core.wire import keys_for_permit
from kent_ops.evidence.log import (
    GENESIS_HASH,
    ChainBroken,
    EvidenceError,
    _connect_ro,
    record_hash,
)

__all__ = ["ReplayResult", "Replayed", "last_record_id", "record_hashes", "replay"]

PROGRESS_EVERY = 1 << 15
"""Records between two calls of the progress callback (cheap enough to ignore)."""

_SELECT = (
    "SELECT id, kind, received_at, topic, payload, accepted, reason, hash FROM records "
    "WHERE id <= ? ORDER BY id"
)
_STARTED = b'"event":"started"'
_ACCEPTED = (None, 0, 1)


class Replayed(NamedTuple):
    """One record as replayed: the stored fields and, for a message, what the engine did.

    ``accepted`` and ``reason`` are what the live service logged; ``result`` is what the
    replaying engine decided (they agree unless the engine changed since the event).
    """

    id: int
    kind: str
    received_at: datetime
    topic: str | None
    payload: bytes
    accepted: bool | None
    reason: str | None
    hash: str
    result: FeedResult | None


OnRecord = Callable[[Replayed, Engine], None]
OnMessage = Callable[[FeedResult, Engine], bool | None]


@dataclass(slots=True)
class ReplayResult:
    """What a replay leaves: the engine at the log's end and the facts about the log.

    Attributes:
        engine: the engine after the last record (collect its alerts and status).
        records: how many records were read (all verified when ``verified``).
        head_hash: the last record's hash (the chain's head).
        clock: the clock the engine ran with.
        recorded_clock: the clock the log's ``started`` record names, if any.
        messages: how many ``message`` records were fed.
        disagreements: messages the replay accepted or rejected differently from the log.
        first_time: the first record's receive time (UTC), or None for an empty file.
        last_time: the last record's receive time (UTC).
        end: the log's end on the engine's clock: with the wall clock the last record's
            time, with the sensor clock the engine's time after the last message.
        verified: whether the chain was recomputed during the replay.
    """

    engine: Engine
    records: int
    head_hash: str
    clock: Clock
    recorded_clock: str | None
    messages: int
    disagreements: int
    first_time: datetime | None
    last_time: datetime | None
    end: datetime | None
    verified: bool


@dataclass(frozen=True, slots=True)
class _Hooks:
    on_record: OnRecord | None
    on_message: OnMessage | None
    progress: Callable[[int], None] | None


def replay(
    permit: Permit,
    evidence_path: str | Path,
    *,
    clock: Clock | None = None,
    on_record: OnRecord | None = None,
    on_message: OnMessage | None = None,
    verify: bool = True,
    note_every_hash: bool = True,
    until: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReplayResult:
    """Feed every record of the log to a fresh engine, streaming, verifying as it goes.

    Args:
        permit: the permit the log was recorded under.
        evidence_path: the evidence log (SQLite).
        clock: the engine's clock; None takes it from the log's ``started`` record
            (``wall`` if the log names none, as before any service ran on it).
        on_record: called after each record is applied, with the record and the engine,
            so a caller can sample figures as they were at that moment.
        on_message: the hot path for callers that look at every message: called after
            each message with only the engine's verdict and the engine (no record is
            built); when it returns True, ``on_record`` is called for that message too.
            Non-message records always go to ``on_record``.
        verify: recompute the hash chain in the same pass; False when the caller has
            verified it (the aggregator opening its own log, or a report verifying in
            parallel).
        note_every_hash: hand every message's hash to the engine as the live service did
            (a restart needs them: a condition pending now cites its record once raised).
            False hands over only the hashes the alerts cite, looked up at the end, which
            is all a report needs and keeps a multi-million-record replay's memory flat.
        until: stop after this record id (a log still being written is read up to a
            fixed point); None reads to the end.
        progress: called with the number of records read so far, now and then.

    Raises:
        EvidenceError: the file is missing or not an evidence log (exit 2).
        ChainBroken: a record does not match the chain; names the first one (exit 1).
    """
    path = Path(evidence_path)
    conn = _connect_ro(path)
    hooks = _Hooks(on_record, on_message, progress)
    try:
        result = _replay(conn, path, permit, clock, hooks, verify, note_every_hash, until)
        if not note_every_hash:
            _note_cited_hashes(conn, result.engine)
        return result
    except sqlite3.DatabaseError as exc:
        raise EvidenceError(f"{path} cannot be read to the end ({exc})") from None
    finally:
        conn.close()


def _replay(
    conn: sqlite3.Connection,
    path: Path,
    permit: Permit,
    clock: Clock | None,
    hooks: _Hooks,
    verify: bool,
    note_every_hash: bool,
    until: int | None,
) -> ReplayResult:
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    recorded = _recorded_clock(conn)
    try:
        keys = keys_for_permit(permit.signing_keys_file)  # verify as the live service did
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    engine = Engine(permit, clock=clock or _as_clock(recorded), keys=keys)
    wall = engine.clock == "wall"
    feed = engine.feed
    note_hash = engine.note_record_hash
    on_record, on_message, progress = hooks.on_record, hooks.on_message, hooks.progress
    parse = datetime.fromisoformat
    prev = GENESIS_HASH
    expected = 1
    messages = 0
    disagreements = 0
    first_time: datetime | None = None
    received: datetime | None = None
    next_progress = PROGRESS_EVERY
    cur = conn.execute(_SELECT, (until if until is not None else 2**62,))
    fetch = cur.fetchmany
    while True:
        rows = fetch(8192)
        if not rows:
            break
        if first_time is None:
            first_time = parse(rows[0][2])
            if verify and rows[0][0] == 1:
                _check_opened(path, rows[0][1], rows[0][4], meta)
        if progress is not None and rows[0][0] >= next_progress:
            progress(rows[0][0] - 1)
            next_progress = rows[0][0] + PROGRESS_EVERY
        for rid, kind, at, topic, payload, accepted, reason, digest in rows:
            if verify:
                if rid != expected:
                    raise ChainBroken(
                        f"record {expected} is missing (the next stored is {rid})", expected
                    )
                try:
                    if accepted not in _ACCEPTED:
                        raise TypeError  # 2 would hash as 1: the stored value must be exact
                    computed = record_hash(prev, rid, kind, at, topic, payload, accepted, reason)
                except (TypeError, AttributeError, OverflowError):
                    raise ChainBroken(
                        f"record {rid} holds a value of the wrong type", rid
                    ) from None
                if computed != digest:
                    raise ChainBroken(
                        f"record {rid} does not match its hash: it was changed, or the record "
                        f"before it was rewritten (computed {computed[:16]}…, stored "
                        f"{str(digest)[:16]}…)",
                        rid,
                    )
            expected = rid + 1
            prev = digest
            received = parse(at)
            if kind == "message":
                result = feed(topic or "", payload, received, rid)
                if note_every_hash:
                    note_hash(rid, digest)
                messages += 1
                if result.accepted != (accepted == 1):
                    disagreements += 1
                if on_message is not None:
                    if not on_message(result, engine) or on_record is None:
                        continue
                elif on_record is None:
                    continue
                on_record(
                    Replayed(
                        rid, kind, received, topic, payload, accepted == 1, reason, digest,
                        result,
                    ),
                    engine,
                )  # fmt: skip
                continue
            if wall and (kind != "system" or engine.now is not None):
                # The live engine first looked at the time of its first status or alert
                # record; the service's own events before that (opened, started, connected)
                # are not engine time, so silence is measured from the same instant.
                engine.tick(received)
            if on_record is not None:
                on_record(
                    Replayed(
                        rid, kind, received, topic, payload,
                        None if accepted is None else accepted == 1, reason, digest, None,
                    ),
                    engine,
                )  # fmt: skip
    count = expected - 1
    if progress is not None:
        progress(count)
    end = received if engine.clock == "wall" or engine.now is None else engine.now
    return ReplayResult(
        engine=engine,
        records=count,
        head_hash=prev,
        clock=engine.clock,  # type: ignore[arg-type]
        recorded_clock=recorded,
        messages=messages,
        disagreements=disagreements,
        first_time=first_time,
        last_time=received,
        end=end,
        verified=verify,
    )


def last_record_id(evidence_path: str | Path) -> int:
    """The id of the log's last committed record (0 for an empty table), read at once."""
    conn = _connect_ro(Path(evidence_path))
    try:
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM records").fetchone()[0])
    finally:
        conn.close()


def record_hashes(evidence_path: str | Path, ids: Iterable[int]) -> dict[int, str]:
    """The stored hash of each of these records (those the file holds)."""
    conn = _connect_ro(Path(evidence_path))
    try:
        return _hashes_of(conn, ids)
    finally:
        conn.close()


def _hashes_of(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for rid in sorted(set(ids)):
        row = conn.execute("SELECT hash FROM records WHERE id = ?", (rid,)).fetchone()
        if row is not None:
            out[rid] = row[0]
    return out


def _note_cited_hashes(conn: sqlite3.Connection, engine: Engine) -> None:
    """Give the engine the hash of every record an alert cites, from the (verified) log."""
    wanted = []
    for alert in engine.alerts.values():
        if alert.evidence.record is not None and alert.evidence.hash is None:
            wanted.append(alert.evidence.record)
    for rid, digest in _hashes_of(conn, wanted).items():
        engine.note_record_hash(rid, digest)


def _check_opened(path: Path, kind: str, payload: bytes, meta: dict[str, str]) -> None:
    """Record 1 must open the log for the event the meta table names."""
    try:
        opened = json.loads(payload) if kind == "system" else None
    except ValueError:
        opened = None
    if not isinstance(opened, dict) or opened.get("event") != "opened":
        raise ChainBroken(f"record 1 of {path} is not the log's opening record", 1)
    for key in ("event_id", "permit_sha256"):
        if opened.get(key) != meta.get(key):
            raise ChainBroken(
                f"record 1 of {path}: the meta table's {key} differs from the opening record's", 1
            )


def _recorded_clock(conn: sqlite3.Connection) -> str | None:
    """The clock the service ran with, from the log's first ``started`` record."""
    row = conn.execute(
        "SELECT payload FROM records WHERE kind = 'system' AND instr(payload, ?) > 0 "
        "ORDER BY id LIMIT 1",
        (_STARTED,),
    ).fetchone()
    return None if row is None else _started_clock(row[0])


def _started_clock(payload: bytes) -> str | None:
    try:
        started = json.loads(payload)
    except ValueError:
        return None
    clock = started.get("clock") if isinstance(started, dict) else None
    return clock if clock in ("wall", "sensor") else None


def _as_clock(recorded: str | None) -> Literal["wall", "sensor"]:
    return "sensor" if recorded == "sensor" else "wall"
