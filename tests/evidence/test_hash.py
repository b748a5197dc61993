"""The chain's hash, pinned: test vectors written out literally, and every field covered.

The hash is the evidence: a log written today must verify with any later kent-ops, so
any change to what is hashed, or how, must fail here first. The vectors below were
computed once from the format described in :func:`kent_ops.evidence.records.record_hash`
and are spelled out byte by byte in :func:`spelled_out`, so the two can be checked
against each other and against a reader's own implementation.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from wire_support import gate_count

from kent_ops.core.wire import Topics
from kent_ops.evidence.log import ChainBroken, EvidenceLog, format_time, read_records, verify
from kent_ops.evidence.records import GENESIS_HASH, record_hash

EVENT = "kent-summer-fest-2027"
SHA = "ab" * 32
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
NORTH = Topics(EVENT).gate_count("north")
SOUTH = Topics(EVENT).gate_count("south")

PREV = "9f" * 32
MESSAGE = (
    PREV,
    17,
    "message",
    "2027-07-04T14:00:05.250000+00:00",
    NORTH,
    b'{"seq":3,"ts":"2027-07-04T14:00:05Z","in_total":120,"out_total":4}',
    True,
    "seq 3 already counted (last 3)",
)
MESSAGE_SHA256 = "14617fca3409cd5a06562072e35098f2916a27e9b78580b410ea5b776643da1b"
OPENING = (
    GENESIS_HASH,
    1,
    "system",
    "2027-07-04T13:59:00.000000+00:00",
    None,
    b'{"event":"opened","event_id":"kent-summer-fest-2027","permit_sha256":"abab"}',
    None,
    None,
)
OPENING_SHA256 = "a1ec36f3f1d6986d51a00a0755847699d4568e39f5ea64bb14b520df48e68ea9"
EMPTY_FIELDS = (PREV, 17, "message", MESSAGE[3], NORTH, b"", False, "")
EMPTY_FIELDS_SHA256 = "378c55eebbe1603f76f743ae05143b0460b327f3408f9314e2ccdf7c012fb11e"


def spelled_out(
    prev: str,
    rid: int,
    kind: str,
    at: str,
    topic: str | None,
    payload: bytes,
    accepted: bool | None,
    reason: str | None,
) -> str:
    """The format, written independently of the product: prefix, previous hash, id, fields.

    A field is ``01`` + its length (8 bytes, big-endian) + its bytes, or ``00`` if absent;
    ``accepted`` is the text ``1`` or ``0``.
    """

    def field(value: bytes | None) -> bytes:
        return b"\x00" if value is None else b"\x01" + len(value).to_bytes(8, "big") + value

    data = b"kent-ops evidence v1\n" + prev.encode("ascii") + rid.to_bytes(8, "big")
    data += field(kind.encode()) + field(at.encode())
    data += field(None if topic is None else topic.encode()) + field(payload)
    data += field(None if accepted is None else (b"1" if accepted else b"0"))
    data += field(None if reason is None else reason.encode())
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    ("record", "expected"),
    [(MESSAGE, MESSAGE_SHA256), (OPENING, OPENING_SHA256), (EMPTY_FIELDS, EMPTY_FIELDS_SHA256)],
    ids=["message", "opening", "empty-fields"],
)
def test_the_hash_test_vectors(record: tuple, expected: str) -> None:
    assert record_hash(*record) == expected
    assert spelled_out(*record) == expected


def test_accepted_hashes_the_same_as_a_bool_or_as_the_stored_integer() -> None:
    """The writer hashes 0/1 (as stored), the vector True: both are the same record."""
    assert record_hash(*MESSAGE[:6], 1, MESSAGE[7]) == MESSAGE_SHA256
    assert record_hash(*EMPTY_FIELDS[:6], 0, "") == EMPTY_FIELDS_SHA256


@pytest.mark.parametrize(
    ("position", "other"),
    [
        (0, "9e" + "9f" * 31),
        (1, 18),
        (2, "status"),
        (3, "2027-07-04T14:00:05.250001+00:00"),
        (4, SOUTH),
        (4, None),
        (5, MESSAGE[5].replace(b"120", b"121")),
        (6, False),
        (6, None),
        (7, "seq 3 already counted (last 4)"),
        (7, None),
    ],
    ids=[
        "prev", "id", "kind", "received_at", "topic", "topic-absent", "payload",
        "accepted", "accepted-absent", "reason", "reason-absent",
    ],
)  # fmt: skip
def test_every_field_changes_the_hash(position: int, other: object) -> None:
    changed = list(MESSAGE)
    changed[position] = other
    assert record_hash(*changed) != MESSAGE_SHA256  # type: ignore[arg-type]


# -- a stored record's topic, kind or id flipped, nothing recomputed ----------------------


def fill(path: Path, n: int = 8) -> None:
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA) as log:
        for i in range(n):
            log.append("message", T0 + timedelta(seconds=i), topic=NORTH,
                       payload=gate_count(i + 1, T0, 10 * i), accepted=True)  # fmt: skip
        log.commit()


def tamper(path: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    """Rewrite stored rows as someone with the file could: the triggers dropped first."""
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("DROP TRIGGER records_no_delete")
    for sql, params in statements:
        conn.execute(sql, params)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("UPDATE records SET topic = ? WHERE id = 5", (SOUTH,)),
        ("UPDATE records SET topic = NULL WHERE id = 5", ()),
        ("UPDATE records SET kind = 'status' WHERE id = 5", ()),
        ("UPDATE records SET kind = 'tick' WHERE id = 5", ()),
    ],
    ids=["topic", "topic-removed", "kind-status", "kind-tick"],
)
def test_a_flipped_topic_or_kind_is_named_by_verify_and_the_writer(
    tmp_path: Path, sql: str, params: tuple[object, ...]
) -> None:
    path = tmp_path / "e.sqlite"
    fill(path)
    good = {r.id: r.hash for r in read_records(path)}
    tamper(path, (sql, params))
    result = verify(path)
    assert (result.ok, result.first_bad, result.count, result.head_hash) == (False, 5, 4, good[4])
    assert "does not match its hash" in (result.problem or "")
    with pytest.raises(ChainBroken, match="record 5") as opened:
        EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA)
    assert opened.value.record == 5


def test_a_record_stored_under_another_id_than_it_was_hashed_with_is_named(
    tmp_path: Path,
) -> None:
    """The chain before it and its content are true; only its id is not the one hashed."""
    path = tmp_path / "e.sqlite"
    fill(path, 4)
    (*_, last) = read_records(path)
    assert last.id == 5
    content = ("message", format_time(T0 + timedelta(seconds=9)), NORTH, b'{"seq":9}', 1, None)
    # What a writer that numbered it 7 would have stored, then moved to 6, the next id.
    hashed_as_7 = record_hash(last.hash, 7, *content)
    tamper(path, ("INSERT INTO records VALUES (6, ?, ?, ?, ?, ?, ?, ?)", (*content, hashed_as_7)))
    result = verify(path)
    assert (result.ok, result.first_bad, result.count) == (False, 6, 5)
    assert "does not match its hash" in (result.problem or "")
    assert record_hash(last.hash, 6, *content) != hashed_as_7  # only the id differs


def test_a_record_moved_to_a_later_id_is_named(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    fill(path, 4)
    tamper(path, ("UPDATE records SET id = 9 WHERE id = 5", ()))
    result = verify(path)
    assert (result.ok, result.first_bad, result.count) == (False, 5, 4)
    assert result.problem == "the record is missing"
