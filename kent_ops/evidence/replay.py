"""Replay an evidence log through the engine: the one way a log becomes a state again.

The post-event report and a restarted aggregator both rebuild what the live service
knew by feeding the log's ``message`` records, in order, to a fresh
:class:`~kent_ops.core.engine.Engine`, exactly as the service fed them: every message
with its topic, raw payload, receive time and record id. With the wall clock the engine
is also ticked, exactly at the log's ``tick`` records, to the ``engine_time`` each one
names: the live service writes one whenever it let its engine's time pass and then
logged records of its own (see :mod:`kent_ops.evidence.records`). No other record's time
moves the engine. A message kept in part (rejected for its size) is fed as the oversized
message it was, a ``flood-summary`` system record adds the messages it counted to the
engine's rejected ones (neither was more to the live engine), and a ``broker-restarted``
record tells the engine where the live service told it. One function does it,
so the report cannot disagree with what inspectors saw. A restarted aggregator may
instead ``resume`` from an engine restored from the log's last ``snapshot`` record and
feed only the records after it (the report always starts at record 1).

The log is streamed (a three-day festival holds millions of records) through the one
chain walk, :class:`kent_ops.evidence.chain.ChainWalk`, which verifies each record
before it is fed and stops at the first that does not match with
:class:`~kent_ops.evidence.records.ChainBroken`, so nothing a tampered record says
ever reaches a result. A log of another schema version is refused: its records do not
mean what this replay reads them as. This module is pure of MQTT and Textual; it reads
SQLite only through the evidence module's read-only connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from kent_ops.core.engine import Clock, Engine, FeedResult
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit
from kent_ops.core.wire import MAX_PAYLOAD_BYTES, keys_for_permit
from kent_ops.evidence.chain import ChainWalk, Row, check_meta
from kent_ops.evidence.records import (
    GENESIS_HASH,
    OVERSIZED,
    ChainBroken,
    EvidenceError,
    EvidenceRecord,
    connect_ro,
)
from kent_ops.evidence.system import (
    BrokerRestarted,
    FloodSummary,
    Started,
    SystemRecord,
    read_system,
)

__all__ = [
    "ReplayResult",
    "engine_failure",
    "Replayed",
    "last_record_id",
    "last_snapshot",
    "record_hashes",
    "recorded_clock",
    "replay",
]

PROGRESS_EVERY = 1 << 15
"""Records between two calls of the progress callback (cheap enough to ignore)."""

_OVERSIZED = bytes(MAX_PAYLOAD_BYTES + 1)
"""What a message kept in part is fed as: a payload the engine rejects for its size alone,
as it rejected the whole one live (the first bytes kept may well parse)."""


def engine_failure(exc: Exception, received_at: datetime) -> FeedResult:
    """A message the engine raised on, as the rejection it is logged as, live and on replay.

    The engine never raises on a message by design; should one still make it raise, the
    service records it as rejected and goes on (acknowledging it), rather than fail on it
    at every restart. A replay then meets the same exception at the same record.
    """
    why = f"{type(exc).__name__}: {exc}"[:300]
    return FeedResult(
        False, f"the engine could not take this message ({why})", "unknown", received_at
    )


class Replayed(EvidenceRecord, frozen=True):
    """One record as replayed: the stored fields, and what the replay made of it.

    ``accepted`` and ``reason`` are what the live service logged; ``result`` is what the
    replaying engine decided for a message (they agree unless the engine changed since
    the event); ``system`` is a system record's event, decoded once, here (None for
    other kinds, and for a payload that is no event this program knows).
    """

    result: FeedResult | None = None
    system: SystemRecord | None = None


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
    until: int | None = None,
    progress: Callable[[int], None] | None = None,
    resume: tuple[Engine, int] | None = None,
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
        until: stop after this record id (a log still being written is read up to a
            fixed point); None reads to the end.
        progress: called with the number of records read so far, now and then.
        resume: (engine, record id): go on with this engine, restored from the snapshot
            in that record, from that record on (the snapshot record itself is read and
            checked against the stored hash of the record before it, not replayed).

    The engine's alerts cite their records by id only; the caller fills in the hashes
    from the log (:mod:`kent_ops.evidence.cite`).

    Raises:
        EvidenceError: the file is missing, not an evidence log or of another schema
            version (exit 2).
        ChainBroken: a record does not match the chain; names the first one (exit 1).
    """
    path = Path(evidence_path)
    conn = connect_ro(path)
    hooks = _Hooks(on_record, on_message, progress)
    try:
        after = (0, GENESIS_HASH) if resume is None else _before(conn, resume[1])
        walk = ChainWalk(conn, verify=verify, until=until, after=after)
        check_meta(path, walk.meta)
        recorded = _recorded_clock(conn)
        engine = _engine(permit, clock or _as_clock(recorded)) if resume is None else resume[0]
        return _replay(walk, path, engine, hooks, recorded=recorded)
    except sqlite3.DatabaseError as exc:
        raise EvidenceError(f"{path} cannot be read to the end ({exc})") from None
    finally:
        conn.close()


def _before(conn: sqlite3.Connection, record_id: int) -> tuple[int, str]:
    """(id, stored hash) of the record before ``record_id``: where a resumed walk starts."""
    if record_id <= 1:
        return 0, GENESIS_HASH
    row = conn.execute("SELECT hash FROM records WHERE id = ?", (record_id - 1,)).fetchone()
    if row is None:
        raise ChainBroken(
            f"record {record_id - 1} is missing", record_id - 1, "the record is missing"
        )
    return record_id - 1, str(row[0])


def _engine(permit: Permit, clock: Clock) -> Engine:
    """A fresh engine, verifying signatures as the live service did."""
    try:
        keys = keys_for_permit(permit.signing_keys_file)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return Engine(permit, clock=clock, keys=keys)


def _replay(
    walk: ChainWalk, path: Path, engine: Engine, hooks: _Hooks, *, recorded: str | None
) -> ReplayResult:
    feed = engine.feed
    wall = engine.clock == "wall"
    on_record, on_message, progress = hooks.on_record, hooks.on_message, hooks.progress
    parse = datetime.fromisoformat
    messages = 0
    disagreements = 0
    first_time: datetime | None = None
    received: datetime | None = None
    next_progress = PROGRESS_EVERY
    for rows in walk.batches():
        if first_time is None:
            first_time = parse(rows[0][2])
        if progress is not None and rows[0][0] >= next_progress:
            progress(rows[0][0] - 1)
            next_progress = rows[0][0] + PROGRESS_EVERY
        for row in rows:
            rid, kind, at, topic, payload, accepted, reason, digest = row
            received = parse(at)
            if kind == "message":
                try:
                    if accepted == 0 and reason is not None and reason.startswith(OVERSIZED):
                        result = feed(topic or "", _OVERSIZED, received, rid)
                        result = result._replace(reason=reason.partition("; ")[0])
                    else:
                        result = feed(topic or "", payload, received, rid)
                except Exception as exc:  # noqa: BLE001 - as the live service took it
                    result = engine_failure(exc, received)
                messages += 1
                if result.accepted != (accepted == 1):
                    disagreements += 1
                if on_message is not None:
                    if not on_message(result, engine) or on_record is None:
                        continue
                elif on_record is None:
                    continue
                on_record(_replayed(row, received, accepted == 1, result), engine)
                continue
            system = _other(engine, wall, path, row)
            if on_record is not None:
                flag = None if accepted is None else accepted == 1
                on_record(_replayed(row, received, flag, None, system), engine)
    count = walk.count
    if progress is not None:
        progress(count)
    end = received if wall or engine.now is None else engine.now
    return ReplayResult(
        engine=engine,
        records=count,
        head_hash=walk.head,
        clock=engine.clock,
        recorded_clock=recorded,
        messages=messages,
        disagreements=disagreements,
        first_time=first_time,
        last_time=received,
        end=end,
        verified=walk.verifies,
    )


def _other(engine: Engine, wall: bool, path: Path, row: Row) -> SystemRecord | None:
    """What a record other than a message does to the engine: a tick, a count of rejected
    messages (a ``flood-summary``: none of them were stored), a broker that restarted
    (every sensor in doubt from here). A system record's event is returned, decoded."""
    kind, payload = row[1], row[4]
    if kind == "tick" and wall:
        engine.tick(_engine_time(path, row))
    elif kind == "system":
        system = read_system(payload)
        if isinstance(system, FloodSummary) and system.messages > 0:
            engine.rejected += system.messages
        elif isinstance(system, BrokerRestarted):
            engine.broker_restarted(system.how)
        return system
    return None


def _replayed(
    row: Row,
    received: datetime,
    accepted: bool | None,
    result: FeedResult | None,
    system: SystemRecord | None = None,
) -> Replayed:
    rid, kind, _, topic, payload, _, reason, digest = row
    return Replayed(rid, kind, received, topic, payload, accepted, reason, digest, result, system)


def _engine_time(path: Path, row: Row) -> datetime:
    """The instant a ``tick`` record says the live engine reached."""
    try:
        engine_time = datetime.fromisoformat(json.loads(row[4])["engine_time"])
    except (ValueError, TypeError, KeyError):
        engine_time = None
    if engine_time is None or engine_time.tzinfo is None:
        raise EvidenceError(f"record {row[0]} of {path} is a tick record without an engine time")
    return engine_time


def last_record_id(evidence_path: str | Path) -> int:
    """The id of the log's last committed record (0 for an empty table), read at once."""
    conn = connect_ro(Path(evidence_path))
    try:
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM records").fetchone()[0])
    finally:
        conn.close()


def record_hashes(evidence_path: str | Path, ids: Iterable[int]) -> dict[int, str]:
    """The stored hash of each of these records (those the file holds)."""
    conn = connect_ro(Path(evidence_path))
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


def last_snapshot(evidence_path: str | Path) -> tuple[int, bytes] | None:
    """The log's last ``snapshot`` record, (id, payload), or None; read, not verified."""
    conn = connect_ro(Path(evidence_path))
    try:
        row = conn.execute(
            "SELECT id, payload FROM records WHERE kind = 'snapshot' ORDER BY id DESC LIMIT 1"
        ).fetchone()
    except sqlite3.DatabaseError as exc:
        raise EvidenceError(f"{evidence_path} cannot be read ({exc})") from None
    finally:
        conn.close()
    return None if row is None else (int(row[0]), bytes(row[1]))


def recorded_clock(evidence_path: str | Path) -> str | None:
    """The clock the service ran with, from the log's first ``started`` record (if any)."""
    conn = connect_ro(Path(evidence_path))
    try:
        return _recorded_clock(conn)
    except sqlite3.DatabaseError as exc:
        raise EvidenceError(f"{evidence_path} cannot be read ({exc})") from None
    finally:
        conn.close()


def _recorded_clock(conn: sqlite3.Connection) -> str | None:
    """The clock the service ran with, from the log's first ``started`` record."""
    rows = conn.execute("SELECT payload FROM records WHERE kind = 'system' ORDER BY id")
    for (payload,) in rows:
        started = read_system(payload)
        if isinstance(started, Started):
            return started.clock if started.clock in ("wall", "sensor") else None
    return None


def _as_clock(recorded: str | None) -> Literal["wall", "sensor"]:
    return "sensor" if recorded == "sensor" else "wall"
