"""A damaged file and the exact words for each kind of bad record.

A log on a dying SD card may hold pages SQLite cannot read: ``kent-ops verify`` must
then name where the chain stood, not crash; and each refusal names its record in the
words ``FAIL record N:`` is followed by.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kent_ops.core.wire import Topics
from kent_ops.evidence.chain import ChainWalk
from kent_ops.evidence.log import (
    ChainBroken,
    EvidenceLog,
    count_records,
    format_time,
    read_meta,
    read_records,
    verify,
)
from kent_ops.evidence.records import GENESIS_HASH, connect_ro, record_hash

EVENT = "kent-summer-fest-2027"
SHA = "ab" * 32
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
TOPIC = Topics(EVENT).gate_count("north")


def fill(path: Path, n: int) -> None:
    """The opening record and ``n`` messages, each payload carrying a unique marker."""
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA) as log:
        for i in range(n):
            body = {"seq": i + 1, "in_total": i, "marker": f"M{i + 2:05d}"}  # its record id
            log.append("message", T0 + timedelta(milliseconds=i), topic=TOPIC,
                       payload=json.dumps(body).encode(), accepted=True)  # fmt: skip
        log.commit()


def spoil_pages_holding(path: Path, needle: bytes) -> None:
    """Make every b-tree page that holds ``needle`` unreadable (its page type byte)."""
    conn = sqlite3.connect(path)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    at = data.find(needle)
    assert at > 0
    while at > 0:
        data[(at // page_size) * page_size] = 0x77  # no such page type
        at = data.find(needle, at + 1)
    path.write_bytes(bytes(data))


def stored_hashes(path: Path, upto: int) -> dict[int, str]:
    conn = connect_ro(path)
    try:
        rows = conn.execute("SELECT id, hash FROM records WHERE id <= ?", (upto,)).fetchall()
        return dict(rows)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "e.sqlite"
    fill(path, 9_000)
    return path


def test_a_page_that_cannot_be_read_is_named_where_the_chain_stood(
    big_log: Path, tmp_path: Path
) -> None:
    path = tmp_path / "e.sqlite"
    path.write_bytes(big_log.read_bytes())
    good = stored_hashes(path, 8192)
    spoil_pages_holding(path, b"M08800")
    result = verify(path)
    # Rows are read a batch of 8,192 at a time: the first batch verified, the second
    # could not be read whole.
    assert (result.ok, result.count, result.first_bad) == (False, 8192, 8193)
    assert result.head_hash == good[8192]
    assert result.problem == "the file is damaged here (database disk image is malformed)"
    assert result.line() == (
        "FAIL record 8193: the file is damaged here (database disk image is malformed)"
    )
    with pytest.raises(ChainBroken) as caught:
        EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA)
    assert caught.value.record == 8193
    assert str(caught.value) == (
        f"{path} does not verify: record 8193: the file is damaged here "
        "(database disk image is malformed)"
    )


def test_an_unreadable_meta_table_is_named_at_record_1(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 3)
    spoil_pages_holding(path, b"schema_version")  # the table and its key
    result = verify(path)
    assert (result.ok, result.count, result.head_hash, result.first_bad) == (
        False, 0, GENESIS_HASH, 1,
    )  # fmt: skip
    assert result.problem == "the file is damaged here (database disk image is malformed)"


def test_records_past_the_first_hundreds_are_read_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 200)
    assert [r.id for r in read_records(path)] == list(range(1, 202))
    assert [r.id for r in read_records(path, start=150)] == list(range(150, 202))
    assert count_records(path) == 201
    assert read_meta(path) == {
        "event_id": EVENT,
        "permit_sha256": SHA,
        "schema_version": "2",
        "created_at": read_meta(path)["created_at"],
    }


# -- the words for each bad record ----------------------------------------------------------


def tamper(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute(sql)
    conn.commit()
    conn.close()


def broken(path: Path) -> ChainBroken:
    conn = connect_ro(path)
    try:
        with pytest.raises(ChainBroken) as caught:
            list(ChainWalk(conn).rows())
        return caught.value
    finally:
        conn.close()


def test_a_missing_record_is_named_with_the_next_one_stored(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 6)
    tamper(path, "DELETE FROM records WHERE id IN (4, 5)")
    exc = broken(path)
    assert (exc.record, exc.problem) == (4, "the record is missing")
    assert str(exc) == "record 4 is missing (the next stored is 6)"


def test_a_value_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 6)
    tamper(path, "UPDATE records SET received_at = x'3137' WHERE id = 3")  # bytes, not text
    exc = broken(path)
    assert (exc.record, exc.problem) == (3, "a field holds a value of the wrong type")
    assert str(exc) == "record 3 holds a value of the wrong type"
    assert verify(path).line() == "FAIL record 3: a field holds a value of the wrong type"


def test_a_changed_record_shows_both_hashes(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 6)
    before = {r.id: r for r in read_records(path)}
    tamper(path, "UPDATE records SET reason = 'forged' WHERE id = 5")
    five = before[5]
    computed = record_hash(before[4].hash, 5, five.kind, format_time(five.received_at),
                           five.topic, five.payload, five.accepted, "forged")  # fmt: skip
    shown = f"(computed {computed[:16]}…, stored {five.hash[:16]}…)"
    exc = broken(path)
    assert exc.record == 5
    assert exc.problem == f"its content does not match its hash {shown}"
    assert str(exc) == (
        "record 5 does not match its hash: it was changed, or the record before it was "
        f"rewritten {shown}"
    )
    assert verify(path).line() == f"FAIL record 5: its content does not match its hash {shown}"
