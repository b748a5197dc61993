"""The stored form: times, canonical JSON, the opening record, and files that are not logs.

Everything here is hashed or shown to a user as it is, so it is checked exactly.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from kent_ops.evidence.chain import ChainWalk
from kent_ops.evidence.log import (
    ChainBroken,
    EvidenceError,
    EvidenceLog,
    format_time,
    json_bytes,
    read_records,
    verify,
)
from kent_ops.evidence.records import GENESIS_HASH, SCHEMA, connect_ro, record_hash

EVENT = "kent-summer-fest-2027"
SHA = "ab" * 32
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)


@pytest.fixture
def new_york_machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A machine whose local zone is not UTC, as a town laptop's is."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_stored_time_is_utc_with_microseconds_whatever_the_machines_zone(
    new_york_machine: None,
) -> None:
    edt = timezone(timedelta(hours=-4))
    assert (
        format_time(datetime(2027, 7, 4, 10, 0, tzinfo=edt)) == "2027-07-04T14:00:00.000000+00:00"
    )
    assert format_time(T0 + timedelta(microseconds=5)) == "2027-07-04T14:00:00.000005+00:00"


def test_a_naive_time_is_refused_in_one_sentence() -> None:
    with pytest.raises(ValueError, match=r"^evidence times must be timezone-aware$"):
        format_time(datetime(2027, 7, 4, 14, 0))  # noqa: DTZ001


def test_canonical_json_is_sorted_compact_and_utf8() -> None:
    assert json_bytes({"b": "é", "a": [1, {"d": None, "c": True}]}) == (
        '{"a":[1,{"c":true,"d":null}],"b":"é"}'.encode()
    )


# -- files that are not evidence logs -------------------------------------------------------


def test_files_that_are_not_logs_are_refused_in_words(tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(EvidenceError) as caught:
        connect_ro(missing)
    assert str(caught.value) == f"{missing}: no such file"
    with pytest.raises(EvidenceError) as caught:
        connect_ro(tmp_path)
    assert str(caught.value) == f"{tmp_path} is a folder, not an evidence log"
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(EvidenceError) as caught:
        connect_ro(other)
    assert str(caught.value) == f"{other} is an SQLite file but not a kent-ops evidence log"
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"SQLite format 3\x00" + b"\xee" * 4080)
    with pytest.raises(EvidenceError) as caught:
        connect_ro(broken)
    assert str(caught.value).startswith(f"{broken} cannot be read as an SQLite file (")


# -- the opening record ---------------------------------------------------------------------


def hand_made(path: Path, kind: str, payload: bytes) -> None:
    """A log whose record 1, correctly hashed, is ``kind`` with ``payload``."""
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    meta = {"event_id": EVENT, "permit_sha256": SHA, "schema_version": "2", "created_at": "x"}
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    at = format_time(T0)
    digest = record_hash(GENESIS_HASH, 1, kind, at, None, payload, None, None)
    conn.execute(
        "INSERT INTO records (id, kind, received_at, topic, payload, accepted, reason, hash) "
        "VALUES (1, ?, ?, NULL, ?, NULL, NULL, ?)",
        (kind, at, payload, digest),
    )
    conn.commit()
    conn.close()


OPENED = {"event": "opened", "event_id": EVENT, "permit_sha256": SHA}


@pytest.mark.parametrize(
    ("kind", "payload", "problem"),
    [
        ("status", json_bytes(OPENED), "the first record is not the log's opening record"),
        ("system", b"{not json", "the opening record is not JSON"),
        ("system", b"[1, 2]", "the first record is not the log's opening record"),
        ("system", json_bytes({**OPENED, "event": "started"}),
         "the first record is not the log's opening record"),
        ("system", json_bytes({**OPENED, "event_id": "kent-fall-fair-2027"}),
         "the meta table's event_id differs from the opening record's"),
        ("system", json_bytes({**OPENED, "permit_sha256": "cd" * 32}),
         "the meta table's permit_sha256 differs from the opening record's"),
    ],
    ids=["not-system", "not-json", "not-an-object", "not-opened", "event", "permit"],
)  # fmt: skip
def test_record_1_must_open_the_log_for_the_meta_tables_event(
    tmp_path: Path, kind: str, payload: bytes, problem: str
) -> None:
    path = tmp_path / "e.sqlite"
    hand_made(path, kind, payload)
    result = verify(path)
    assert (result.ok, result.first_bad, result.count, result.problem) == (False, 1, 0, problem)
    conn = connect_ro(path)
    try:
        with pytest.raises(ChainBroken) as caught:
            list(ChainWalk(conn).rows())
    finally:
        conn.close()
    assert str(caught.value) == f"record 1: {problem}"
    assert caught.value.problem == problem


def test_a_true_opening_record_verifies(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    hand_made(path, "system", json_bytes(OPENED))
    assert verify(path).ok


# -- reading without checking ---------------------------------------------------------------


def test_an_unchecked_walk_stands_at_the_last_row_it_handed_out(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA) as log:
        for i in range(6):
            log.append("status", T0, payload=json.dumps({"i": i}).encode())
        log.commit()
    hashes = {r.id: r.hash for r in read_records(path)}
    conn = connect_ro(path)
    try:
        walk = ChainWalk(conn, verify=False, until=5)
        assert [row[0] for row in walk.rows()] == [1, 2, 3, 4, 5]
        assert (walk.count, walk.head) == (5, hashes[5])
        whole = ChainWalk(conn, verify=False)
        assert [row[0] for row in whole.rows()] == list(range(1, 8))
        assert (whole.count, whole.head) == (7, hashes[7])
    finally:
        conn.close()
