"""The evidence log: append, commit, continue, and catch every kind of tampering."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from kent_ops.commands.cli import main
from kent_ops.core.wire import Topics
from kent_ops.evidence.log import (
    GENESIS_HASH,
    ChainBroken,
    EvidenceError,
    EvidenceLog,
    EvidenceWriteError,
    count_records,
    read_meta,
    read_records,
    record_hash,
    verify,
)

EVENT = "kent-summer-fest-2027"
PERMIT_SHA = "ab" * 32
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
TOPIC = Topics(EVENT).gate_count("north")
UNICODE_TOPIC = f"{Topics('x').prefix}/ünïcode"  # not one of ours: stored as received


def _open(path: Path, event: str = EVENT, sha: str = PERMIT_SHA) -> EvidenceLog:
    return EvidenceLog.open(path, event_id=event, permit_sha256=sha)


def _fill(path: Path, n: int = 10) -> None:
    with _open(path) as log:
        for i in range(n):
            log.append(
                "message",
                T0 + timedelta(seconds=i),
                topic=TOPIC,
                payload=json.dumps({"seq": i, "in_total": 100 + i, "marker": f"M{i:04d}"}).encode(),
                accepted=i % 3 != 0,
                reason=None if i % 3 else "seq-repeat",
            )
        log.commit()


def _tamper(path: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    """Rewrite a record the way an attacker with the file would: triggers dropped first."""
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def test_a_new_log_opens_with_a_system_record_and_its_meta(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    with _open(path) as log:
        assert log.head[0] == 1
    records = list(read_records(path))
    assert len(records) == 1
    first = records[0]
    assert first.kind == "system"
    assert json.loads(first.payload) == {
        "event": "opened",
        "event_id": EVENT,
        "permit_sha256": PERMIT_SHA,
    }
    assert first.hash == record_hash(
        GENESIS_HASH,
        1,
        "system",
        first.received_at.isoformat(timespec="microseconds"),
        None,
        first.payload,
        None,
        None,
    )
    meta = read_meta(path)
    assert meta["event_id"] == EVENT
    assert meta["permit_sha256"] == PERMIT_SHA
    assert meta["schema_version"] == "2"
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_append_commit_reopen_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 5)
    first = verify(path)
    assert first.ok
    assert first.count == 6
    with _open(path) as log:
        assert log.head == (6, first.head_hash)
        rid, digest = log.append("status", T0, payload=b'{"x":1}')
        assert rid == 7
        log.commit()
    result = verify(path)
    assert result.ok
    assert (result.count, result.head_hash) == (7, digest)
    assert [r.id for r in read_records(path)] == list(range(1, 8))
    assert [r.id for r in read_records(path, start=5)] == [5, 6, 7]
    assert count_records(path) == 7


def test_rollback_drops_the_uncommitted_appends(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    with _open(path) as log:
        before = log.head
        log.append("message", T0, topic=TOPIC, payload=b"one", accepted=True)
        log.append("message", T0, topic=TOPIC, payload=b"two", accepted=True)
        assert log.head[0] == before[0] + 2
        assert log.pending == 2
        log.rollback()
        assert log.head == before
        assert log.pending == 0
        rid, _ = log.append("message", T0, topic=TOPIC, payload=b"three", accepted=True)
        assert rid == before[0] + 1
        log.commit()
        # Closing drops what was not committed.
        log.append("message", T0, topic=TOPIC, payload=b"lost", accepted=True)
    assert [r.payload for r in read_records(path)][1:] == [b"three"]
    assert verify(path).ok


def test_a_failed_commit_leaves_nothing_and_can_be_retried(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    with _open(path) as log:
        before = log.head
        pages = log._conn.execute("PRAGMA page_count").fetchone()[0]
        log._conn.execute(f"PRAGMA max_page_count={pages}")  # the disk is now full
        for _ in range(50):
            log.append("message", T0, topic=TOPIC, payload=b"x" * 4000, accepted=True)
        with pytest.raises(EvidenceWriteError, match="full"):
            log.commit()
        log.rollback()
        assert log.head == before
        log._conn.execute("PRAGMA max_page_count=1073741823")
        log.append("message", T0, topic=TOPIC, payload=b"after", accepted=True)
        log.commit()
    assert count_records(path) == 2
    assert verify(path).ok


def test_records_round_trip_exactly(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    every_byte = bytes(range(256)) * 3
    offset = timezone(timedelta(hours=-4))
    local = datetime(2027, 7, 4, 10, 3, 5, 120000, tzinfo=offset)
    with _open(path) as log:
        log.append("message", local, topic=TOPIC, payload=every_byte, accepted=False, reason="r")
        log.append("message", T0, topic=UNICODE_TOPIC, payload=b"", accepted=True)
        log.append("system", T0, payload=b'{"event":"started"}')
        log.commit()
    recs = list(read_records(path))[1:]
    assert recs[0].payload == every_byte
    assert recs[0].received_at == local
    assert recs[0].received_at.utcoffset() == timedelta(0)
    assert (recs[0].accepted, recs[0].reason, recs[0].topic) == (False, "r", TOPIC)
    assert (recs[1].payload, recs[1].accepted, recs[1].topic) == (b"", True, UNICODE_TOPIC)
    assert (recs[2].accepted, recs[2].topic, recs[2].reason) == (None, None, None)


def test_naive_times_and_unknown_kinds_are_refused(tmp_path: Path) -> None:
    with _open(tmp_path / "e.sqlite") as log:
        with pytest.raises(ValueError, match="timezone-aware"):
            log.append("message", datetime(2027, 7, 4, 14, 0), payload=b"x")
        with pytest.raises(ValueError, match="kind"):
            log.append("gossip", T0, payload=b"x")


def test_the_encoding_is_unambiguous() -> None:
    base = (GENESIS_HASH, 2, "message", "2027-07-04T14:00:00.000000+00:00")
    a = record_hash(*base, "ab", b"c", True, None)
    b = record_hash(*base, "a", b"bc", True, None)
    c = record_hash(*base, None, b"abc", True, None)
    d = record_hash(*base, "ab", b"c", None, None)
    e = record_hash(*base, "ab", b"c", True, "")
    assert len({a, b, c, d, e}) == 5


def test_stray_updates_and_deletes_fail(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 3)
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE records SET payload = x'00' WHERE id = 2")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM records WHERE id = 3")
    with pytest.raises(sqlite3.IntegrityError, match="fixed"):
        conn.execute("UPDATE meta SET value = 'other' WHERE key = 'event_id'")
    conn.close()
    assert verify(path).ok


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("UPDATE records SET payload = ? WHERE id = 5", (b'{"seq": 3, "in_total": 104}',)),
        ("UPDATE records SET reason = 'seq-rEpeat' WHERE id = 5", ()),
        ("UPDATE records SET accepted = 1 WHERE id = 5", ()),
        ("UPDATE records SET received_at = '2027-07-04T14:00:04.000001+00:00' WHERE id = 5", ()),
        (
            "UPDATE records SET hash = substr(hash, 1, 10) || "
            "(CASE substr(hash, 11, 1) WHEN 'a' THEN 'b' ELSE 'a' END) || substr(hash, 12) "
            "WHERE id = 5",
            (),
        ),
    ],
    ids=["payload", "reason", "accepted", "received_at", "hash"],
)
def test_a_changed_field_is_caught_and_named(tmp_path: Path, sql: str, params: tuple) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 8)
    _tamper(path, sql, params)
    result = verify(path)
    assert not result.ok
    assert result.first_bad == 5
    assert result.count == 4
    with pytest.raises(ChainBroken, match="record 5") as caught:
        _open(path)
    assert caught.value.record == 5


def test_a_deleted_record_is_named(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 8)
    _tamper(path, "DELETE FROM records WHERE id = 4")
    result = verify(path)
    assert (result.ok, result.first_bad, result.problem) == (False, 4, "the record is missing")


def test_a_rewritten_meta_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 2)
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER meta_no_update")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'permit_sha256'", ("cd" * 32,))
    conn.commit()
    conn.close()
    result = verify(path)
    assert (result.ok, result.first_bad) == (False, 1)
    assert "permit_sha256" in (result.problem or "")


def test_a_flipped_raw_byte_in_the_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 10)  # closing checkpoints the WAL into the main file
    data = bytearray(path.read_bytes())
    at = data.find(b"M0006")
    assert at > 0
    assert data.find(b"M0006", at + 1) == -1
    data[at + 1] ^= 0x01  # "M0006" -> "L0006"
    path.write_bytes(bytes(data))
    result = verify(path)
    assert not result.ok
    assert result.first_bad == 8  # the opening record is 1, so the 7th message is record 8


def test_another_events_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 1)
    with pytest.raises(EvidenceError, match="other-event"):
        _open(path, event="other-event")


def test_a_changed_permit_is_recorded_in_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 1)
    with _open(path, sha="ef" * 32):
        pass
    last = list(read_records(path))[-1]
    assert json.loads(last.payload) == {
        "event": "permit-changed",
        "opened_with": PERMIT_SHA,
        "permit_sha256": "ef" * 32,
    }
    assert verify(path).ok


def test_a_non_sqlite_file_is_refused_by_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    path.write_text("not a database at all\n")
    with pytest.raises(EvidenceError, match="not an SQLite"):
        _open(path)


def test_cli_verify_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 4)
    head = verify(path).head_hash
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out == f"OK 5 {head}\n"


def test_cli_verify_names_the_bad_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "e.sqlite"
    _fill(path, 4)
    _tamper(path, "UPDATE records SET payload = x'7b7d' WHERE id = 3")
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert out.startswith("FAIL record 3: ")


@pytest.mark.parametrize("what", ["missing", "text", "folder", "other-sqlite"])
def test_cli_verify_bad_input_is_one_sentence_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str
) -> None:
    path = tmp_path / "e.sqlite"
    if what == "text":
        path.write_text("hello\n")
    elif what == "folder":
        path.mkdir()
    elif what == "other-sqlite":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
        conn.close()
    assert main(["verify", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("kent-ops: ")
    assert captured.err.count("\n") == 1
    assert "Traceback" not in captured.err
