"""The one chain walk: verify, replay and a continuing writer agree on the first bad record."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from live_support import permit_text
from wire_support import gate_count

from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import Topics
from kent_ops.evidence.chain import ChainWalk
from kent_ops.evidence.log import (
    ChainBroken,
    EvidenceError,
    EvidenceLog,
    format_time,
    json_bytes,
    read_records,
    record_hash,
    verify,
)
from kent_ops.evidence.records import GENESIS_HASH, SCHEMA, connect_ro
from kent_ops.evidence.replay import replay

EVENT = "kent-summer-fest-2027"
SHA = "ab" * 32
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
TOPIC = Topics(EVENT).gate_count("north")


@pytest.fixture
def permit(tmp_path: Path) -> Permit:
    path = tmp_path / "permit.toml"
    path.write_text(permit_text())
    return load_permit(path)


def fill(path: Path, n: int = 8) -> None:
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA) as log:
        log.append_json("system", T0, {"event": "started", "clock": "sensor"})
        for i in range(n):
            log.append("message", T0 + timedelta(seconds=i), topic=TOPIC,
                       payload=gate_count(i + 1, T0, i), accepted=True)  # fmt: skip
        log.commit()


def tamper(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    for trigger in ("records_no_update", "records_no_delete", "meta_no_update"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute(sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("sql", "bad", "problem"),
    [
        ("UPDATE records SET payload = x'7b7d' WHERE id = 5", 5, "does not match its hash"),
        ("DELETE FROM records WHERE id = 4", 4, "the record is missing"),
        ("UPDATE records SET accepted = 2 WHERE id = 6", 6, "wrong type"),
        ("UPDATE records SET topic = x'41' WHERE id = 3", 3, "wrong type"),
        ("UPDATE meta SET value = 'other' WHERE key = 'permit_sha256'", 1, "permit_sha256"),
    ],
    ids=["changed", "missing", "accepted-2", "topic-int", "meta"],
)
def test_verify_replay_and_the_writer_name_the_same_first_bad_record(
    tmp_path: Path, permit: Permit, sql: str, bad: int, problem: str
) -> None:
    path = tmp_path / "e.sqlite"
    fill(path)
    tamper(path, sql)
    result = verify(path)
    assert (result.ok, result.first_bad, result.count) == (False, bad, bad - 1)
    assert problem in (result.problem or "")
    with pytest.raises(ChainBroken) as replayed:
        replay(permit, path)
    assert replayed.value.record == bad
    with pytest.raises(ChainBroken) as opened:
        EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA)
    assert opened.value.record == bad
    assert f"record {bad}" in str(opened.value)


def test_the_walk_stands_at_the_last_good_record(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path)
    good = {r.id: r.hash for r in read_records(path)}
    tamper(path, "UPDATE records SET reason = 'x' WHERE id = 7")
    conn = connect_ro(path)
    walk = ChainWalk(conn)
    batches = walk.batches()
    with pytest.raises(ChainBroken):
        next(batches)  # a batch is handed out only once every record in it passed
    conn.close()
    assert (walk.count, walk.head) == (6, good[6])


def test_the_walk_reads_unchecked_when_asked_and_stops_at_until(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path)
    tamper(path, "UPDATE records SET payload = x'00' WHERE id = 3")
    conn = connect_ro(path)
    try:
        walk = ChainWalk(conn, verify=False, until=5)
        assert [row[0] for row in walk.rows()] == [1, 2, 3, 4, 5]
        assert walk.count == 5
        empty = ChainWalk(conn, until=0)
        assert list(empty.rows()) == []
        assert (empty.count, empty.head) == (0, GENESIS_HASH)
    finally:
        conn.close()


def test_a_log_of_another_schema_version_is_refused_naming_both(
    tmp_path: Path, permit: Permit
) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 2)
    tamper(path, "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with pytest.raises(EvidenceError, match="schema version 1.*version 2") as caught:
        EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA)
    assert "\n" not in str(caught.value)
    with pytest.raises(EvidenceError, match="schema version 1.*version 2"):
        replay(permit, path)
    assert verify(path).ok  # the hash is the same in both versions


def test_a_records_table_with_other_field_types_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA.replace("payload BLOB NOT NULL", "payload TEXT NOT NULL"))
    meta = {"event_id": EVENT, "permit_sha256": SHA, "schema_version": "2", "created_at": "x"}
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    opened = json_bytes({"event": "opened", "event_id": EVENT, "permit_sha256": SHA})
    at = format_time(T0)
    digest = record_hash(GENESIS_HASH, 1, "system", at, None, opened, None, None)
    conn.execute("INSERT INTO records VALUES (1, 'system', ?, NULL, ?, NULL, NULL, ?)",
                 (at, opened, digest))  # fmt: skip
    conn.commit()
    conn.close()
    assert verify(path).ok
    with pytest.raises(EvidenceError, match="field types"):
        EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA)


def test_hash_of_sees_committed_and_pending_records(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 2)
    stored = {r.id: r.hash for r in read_records(path)}
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA) as log:
        assert log.hash_of(2) == stored[2]
        rid, digest = log.append("status", T0, payload=b"{}")
        assert log.hash_of(rid) == digest  # not yet committed
        assert log.hash_of(rid + 1) is None
        assert log.hash_of(0) is None
        log.rollback()
        assert log.hash_of(rid) is None
        log.append("status", T0, payload=b"{}")
        rid2, digest2 = log.append("status", T0, payload=b'{"x":1}')
        log.commit()
        assert log.hash_of(rid2) == digest2
    assert verify(path).ok
