"""The witness file's format: what a keeper writes, a reader takes back, and what it skips."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from kent_ops.core.witness import FORMAT, checkpoint_problem, entry_line, read_witness

EVENT = "kent-summer-fest-2027"
AT = datetime(2027, 7, 4, 18, 4, 1, 250000, tzinfo=UTC)
H = "9f2c" + "0" * 60


def point(record: int = 18233, digest: str = H) -> bytes:
    return json.dumps({"record": record, "hash": digest, "ts": "2027-07-04T18:04:00Z"}).encode()


def line(**changes: object) -> bytes:
    fields = dict(event=EVENT, received_at=AT, by="inspector-alice", host="laptop-3",
                  retained=True, payload=point())  # fmt: skip
    fields.update(changes)
    return entry_line(**fields)  # type: ignore[arg-type]


def test_a_line_keeps_the_checkpoint_as_received_and_who_received_it_when() -> None:
    raw = line()
    assert raw.endswith(b"\n")
    assert raw.count(b"\n") == 1
    entry = json.loads(raw)
    assert entry == {
        "format": FORMAT,
        "event": EVENT,
        "received_at": "2027-07-04T18:04:01.250000+00:00",
        "by": "inspector-alice",
        "host": "laptop-3",
        "retained": True,
        "payload": point().decode(),
    }
    assert entry["payload"].encode() == point()  # the bytes, not a re-encoding


def test_read_back_in_order_with_line_numbers() -> None:
    data = line() + b"\n" + line(payload=point(18300, "ab" * 32))
    read = read_witness(data, EVENT)
    assert [(e.line, e.record, e.hash) for e in read.entries] == [
        (1, 18233, H),
        (3, 18300, "ab" * 32),
    ]
    assert read.entries[0].by == "inspector-alice"
    assert read.entries[0].received_at == "2027-07-04T18:04:01.250000+00:00"
    assert read.skipped == []


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (line()[:40], "it is not a line of JSON"),  # cut short by a power cut
        (line(event="another-event"), "it is a checkpoint of event 'another-event'"),
        (json.dumps({"format": "something else"}).encode(), "it is not a 'kent-ops witness 1'"),
        (
            line().replace(b'"by":"inspector-alice"', b'"by":7'),
            "its received_at, by or host is not text",
        ),
        (
            line().replace(b'\\"record\\": 18233', b'\\"record\\": 0'),
            "its payload is not a checkpoint: its record is not a whole number",
        ),
        (
            line().replace(b'\\"record\\": 18233', b'\\"record\\": 18233.0'),
            "its payload is not a checkpoint: its record is not a whole number",
        ),
    ],
    ids=["cut-short", "another-event", "another-format", "by-not-text", "record-0", "float"],
)
def test_a_line_that_is_not_one_is_skipped_with_its_reason(raw: bytes, why: str) -> None:
    read = read_witness(line() + raw.rstrip(b"\n") + b"\n", EVENT)
    assert [e.line for e in read.entries] == [1]
    assert len(read.skipped) == 1
    assert read.skipped[0][0] == 2
    assert read.skipped[0][1].startswith(why)


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (b"", "it is not JSON text"),
        (b"\xff", "it is not JSON text"),
        (b"[1, 2]", "it is not a JSON object"),
        (b'{"record": true, "hash": "' + H.encode() + b'"}', "its record is not a whole number"),
        (b'{"record": 5, "hash": "9F2C"}', "its hash is not 64 lower-case hex digits"),
        (b'{"record": 5, "hash": "' + H.upper().encode() + b'"}', "its hash is not 64"),
    ],
)
def test_what_is_not_a_checkpoint_is_never_kept(payload: bytes, problem: str) -> None:
    assert (checkpoint_problem(payload) or "").startswith(problem)
    with pytest.raises(ValueError, match="not a checkpoint"):
        line(payload=payload)


def test_a_time_without_its_offset_is_refused() -> None:
    with pytest.raises(ValueError, match="UTC offset"):
        line(received_at=datetime(2027, 7, 4, 18, 4))  # noqa: DTZ001 (the point of the test)
