"""The log against what others say it held: its head file, checkpoints given, witness files.

``kent-ops verify`` is run in this process on real SQLite files; a log is cut by
deleting its last records (the triggers dropped first, as an intruder would).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cli_support import kent_ops
from wire_support import gate_count

from kent_ops.core.errors import UsageError
from kent_ops.core.wire import Topics
from kent_ops.core.witness import entry_line
from kent_ops.evidence.claims import (
    OutsideClaim,
    checkpoint_claim,
    contradictions,
    read_head_file,
    witness_claims,
)
from kent_ops.evidence.log import EvidenceLog
from kent_ops.evidence.records import EvidenceError

EVENT = "kent-summer-fest-2027"
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
TOPIC = Topics(EVENT).gate_count("north")


def write_log(path: Path, n: int = 20) -> list[str]:
    """A log of ``n`` + 1 records (the opening one first); each record's hash, by id - 1."""
    hashes = []
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256="ab" * 32) as log:
        hashes.append(log.head[1])
        for i in range(n):
            _, digest = log.append("message", T0 + timedelta(seconds=i), topic=TOPIC,
                                   payload=gate_count(i + 1, T0, i), accepted=True)  # fmt: skip
            hashes.append(digest)
        log.commit()
    return hashes


def write_head(path: Path, record: int, digest: str) -> None:
    head = path.with_name(path.name + ".head")
    head.write_text(json.dumps({"record": record, "hash": digest, "ts": None, "session": None}))


def cut(path: Path, keep: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute("DELETE FROM records WHERE id > ?", (keep,))
    conn.commit()
    conn.close()


def witness(path: Path, *points: tuple[int, str], event: str = EVENT) -> Path:
    with path.open("ab") as f:
        for record, digest in points:
            payload = json.dumps({"record": record, "hash": digest}).encode()
            f.write(entry_line(event=event, received_at=T0, by="inspector-alice", host="h",
                               retained=False, payload=payload))  # fmt: skip
    return path


@pytest.fixture
def log(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "evidence.sqlite"
    hashes = write_log(path)
    write_head(path, 21, hashes[20])
    return path, hashes


def test_a_whole_log_beside_its_head_file_is_ok(
    log: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, hashes = log
    ran = kent_ops(capsys, "verify", str(path), "--checkpoint", f"10:{hashes[9]}")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, f"OK 21 {hashes[20]}\n", "")


def test_a_cut_tail_is_named_by_the_head_file(
    log: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = log
    cut(path, 11)
    ran = kent_ops(capsys, "verify", str(path))
    assert ran.returncode == 1
    assert (
        ran.stdout == "FAIL record 12: the log holds 11 records but its head file names record 21\n"
    )


def test_another_record_where_the_head_file_points_is_named(
    log: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, hashes = log
    write_head(path, 15, hashes[3])
    ran = kent_ops(capsys, "verify", str(path))
    assert ran.returncode == 1
    assert ran.stdout == (
        f"FAIL record 15: its hash in the log ({hashes[14][:16]}…) is not the one its head "
        f"file names ({hashes[3][:16]}…)\n"
    )


def test_a_checkpoint_given_the_log_no_longer_reaches_fails_it(
    log: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, hashes = log
    cut(path, 11)
    write_head(path, 11, hashes[10])  # the head file rewritten to match: the checkpoint stays
    ran = kent_ops(capsys, "verify", str(path), "--checkpoint", f"18:{hashes[17]}")
    assert ran.returncode == 1
    assert ran.stdout == (
        "FAIL record 12: the log holds 11 records but the checkpoint given names record 18\n"
    )


def test_a_witness_contradicted_is_named_with_its_file_and_line(
    log: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, hashes = log
    kept = witness(tmp_path / "alice.jsonl", (5, hashes[4]), (9, "cd" * 32), (12, "ef" * 32))
    ran = kent_ops(capsys, "verify", str(path), "--witness", str(kept))
    assert ran.returncode == 1
    assert ran.stdout == (
        f"FAIL record 9: its hash in the log ({hashes[8][:16]}…) is not the one witness {kept} "
        f"(line 2, kept by inspector-alice at {T0.isoformat(timespec='microseconds')}) names "
        "(cdcdcdcdcdcdcdcd…)\n"
    )  # the first contradiction of each witness, not every line after it


def test_a_witness_that_agrees_passes(
    log: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, hashes = log
    kept = witness(tmp_path / "alice.jsonl", (5, hashes[4]), (21, hashes[20]))
    ran = kent_ops(capsys, "verify", str(path), "--witness", str(kept), "--witness", str(kept))
    assert (ran.returncode, ran.stdout) == (0, f"OK 21 {hashes[20]}\n")


def test_no_head_file_is_a_warning_unless_a_checkpoint_says_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "evidence.sqlite"
    hashes = write_log(path)
    ran = kent_ops(capsys, "verify", str(path))
    assert (ran.returncode, ran.stdout) == (0, f"OK 21 {hashes[20]}\n")
    assert ran.stderr == (
        f"kent-ops: warning: there is no head file beside {path} (evidence.sqlite.head), so "
        "nothing here shows whether records were cut from the log's end; check it against a "
        "checkpoint kept elsewhere (--checkpoint, --witness)\n"
    )
    cut(path, 11)
    ran = kent_ops(capsys, "verify", str(path), "--checkpoint", f"21:{hashes[20]}")
    assert ran.returncode == 1
    assert ran.stdout.startswith("FAIL record 12: the log holds 11 records but the checkpoint")


def test_a_broken_chain_is_named_before_any_claim(
    log: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = log
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET payload = x'00' WHERE id = 7")
    conn.commit()
    conn.close()
    cut(path, 11)
    ran = kent_ops(capsys, "verify", str(path))
    assert ran.returncode == 1
    assert ran.stdout.startswith("FAIL record 7: its content does not match its hash")
    assert ran.stdout.count("\n") == 1


@pytest.mark.parametrize(
    "bad", ["12", "12:abc", "x:" + "ab" * 32, "0:" + "ab" * 32, "12:" + "AB" * 32]
)
def test_a_bad_checkpoint_is_one_sentence_and_exit_2(
    log: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    path, _ = log
    ran = kent_ops(capsys, "verify", str(path), "--checkpoint", bad)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (
        f"kent-ops: --checkpoint {bad!r} is not RECORD:HASH, a record number and the 64 hex "
        "digits of its hash as a checkpoint gives them (e.g. 225:9f2c…)\n"
    )


def test_a_missing_witness_file_and_a_damaged_head_file_are_exit_2(
    log: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = log
    missing = tmp_path / "nobody.jsonl"
    ran = kent_ops(capsys, "verify", str(path), "--witness", str(missing))
    assert (ran.returncode, ran.stderr) == (2, f"kent-ops: witness file {missing}: no such file\n")
    path.with_name("evidence.sqlite.head").write_text('{"record": "many"}')
    ran = kent_ops(capsys, "verify", str(path))
    assert ran.returncode == 2
    assert ran.stderr == (
        f"kent-ops: head file {path}.head is damaged: it does not name a record and its hash\n"
    )


def test_unusable_witness_lines_are_a_warning_that_names_them(
    log: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, hashes = log
    kept = witness(tmp_path / "w.jsonl", (5, hashes[4]))
    witness(kept, (6, hashes[5]), event="other-event")
    with kept.open("ab") as f:
        f.write(b'{"format": "kent-ops witn')  # a line cut short
    read = witness_claims(kept, EVENT)
    assert [c.record for c in read.claims] == [5]
    assert read.warning == (
        f"witness file {kept}: 2 line(s) skipped, not checkpoints of event {EVENT} (line 2: it "
        "is a checkpoint of event 'other-event', not of 'kent-summer-fest-2027'; line 3: it is "
        "not a line of JSON)"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert witness_claims(empty, EVENT).warning == f"witness file {empty} holds no checkpoint"
    with pytest.raises(EvidenceError, match="no such file"):
        witness_claims(tmp_path / "none.jsonl", EVENT)


def test_one_contradiction_per_origin_in_the_order_given() -> None:
    claims = [
        OutsideClaim(30, "aa", "its head file", "head"),
        OutsideClaim(10, "bb", "witness w (line 1)", "w"),
        OutsideClaim(25, "cc", "witness w (line 2)", "w"),
        OutsideClaim(5, "dd", "the checkpoint given", "5:dd"),
        OutsideClaim(0, "", "a claim of no record", "none"),
    ]
    found = contradictions(20, {5: "dd", 10: "xx"}, claims)
    assert [(c.claim.origin, c.first_bad) for c in found] == [("head", 21), ("w", 10)]
    assert found[0].sentence == "the log holds 20 records but its head file names record 30"
    assert found[1].sentence.startswith("record 10's hash in the log (xx…) is not the one witness")


def test_the_head_file_and_checkpoint_readers() -> None:
    assert checkpoint_claim(" 12:" + "ab" * 32).record == 12
    with pytest.raises(UsageError):
        checkpoint_claim("12:" + "ab" * 31)
    assert read_head_file(Path("/nonexistent/evidence.sqlite")) is None
