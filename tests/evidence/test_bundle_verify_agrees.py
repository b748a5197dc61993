"""The bundle's verify.py and kent-ops's own chain walk and witness reader cannot drift apart.

verify.py is a copy-free re-implementation for counsel (Python's standard library only),
so every way a log or a witness line can be right or wrong is put to both here, and
they must agree on the record count, the head and the first bad record. The same check
on a log the real aggregator wrote is in tests/integration/test_bundle.py.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from wire_support import gate_count

from kent_ops.core.wire import Topics
from kent_ops.core.witness import entry_line, read_witness
from kent_ops.evidence import bundle_verify
from kent_ops.evidence.chain import verify
from kent_ops.evidence.log import EvidenceLog

EVENT = "kent-summer-fest-2027"
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
TOPIC = Topics(EVENT).gate_count("north")


def varied_log(path: Path) -> None:
    """Every shape a record takes: each kind, absent and present fields, bytes of all values,
    accepted true, false and absent, text beyond ASCII."""
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256="ab" * 32) as log:
        at = T0
        for i in range(40):
            at += timedelta(milliseconds=137 * i)
            log.append("message", at, topic=TOPIC, payload=gate_count(i + 1, at, i), accepted=True)
        log.append("message", at, topic=TOPIC, payload=bytes(range(256)), accepted=False,
                   reason="not JSON: ünïcode reason")  # fmt: skip
        log.append("message", at, topic=TOPIC, payload=b"", accepted=True, reason="duplicate")
        log.append_json("tick", at, {"engine_time": at.isoformat()})
        log.append_json("status", at, {"attendance": {"total": 40}, "note": "café"})
        log.append_json("alert", at, {"id": "A-0001", "rule": "max-at-one-time"})
        log.append("snapshot", at, payload=b"{}")
        log.append_json("system", at, {"event": "stopped"})
        log.commit()


def tamper(path: Path, *sql: str) -> None:
    conn = sqlite3.connect(path)
    for trigger in ("records_no_update", "records_no_delete", "meta_no_update"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for statement in sql:
        conn.execute(statement)
    conn.commit()
    conn.close()


TAMPERINGS = {
    "as written": (),
    "a payload byte": ("UPDATE records SET payload = x'01' || substr(payload, 2) WHERE id = 17",),
    "a record deleted": ("DELETE FROM records WHERE id = 23",),
    "the tail cut": ("DELETE FROM records WHERE id > 30",),
    "a time": ("UPDATE records SET received_at = received_at || ' ' WHERE id = 9",),
    "topic made absent": ("UPDATE records SET topic = NULL WHERE id = 5",),
    "accepted flipped": ("UPDATE records SET accepted = 0 WHERE id = 6",),
    "accepted made absent": ("UPDATE records SET accepted = NULL WHERE id = 7",),
    "accepted 2": ("UPDATE records SET accepted = 2 WHERE id = 8",),
    "payload as text": ("UPDATE records SET payload = CAST(payload AS TEXT) WHERE id = 10",),
    "a reason added": ("UPDATE records SET reason = 'x' WHERE id = 11",),
    "the kind changed": ("UPDATE records SET kind = 'status' WHERE id = 12",),
    "two records swapped": (
        "UPDATE records SET id = -1 WHERE id = 20",
        "UPDATE records SET id = 20 WHERE id = 21",
        "UPDATE records SET id = 21 WHERE id = -1",
    ),
    "the opening record's event": ("UPDATE meta SET value = 'other' WHERE key = 'event_id'",),
    "an id gap at the start": ("DELETE FROM records WHERE id = 1",),
}


@pytest.mark.parametrize("change", list(TAMPERINGS))
def test_verify_py_and_the_chain_walk_agree(tmp_path: Path, change: str) -> None:
    path = tmp_path / "evidence.sqlite"
    varied_log(path)
    tamper(path, *TAMPERINGS[change])
    ours = verify(path, want=(3, 30))
    theirs = bundle_verify.walk_chain(path, want=(3, 30))
    assert (theirs.count, theirs.head, theirs.first_bad) == (ours.count, ours.head_hash,
                                                              ours.first_bad)  # fmt: skip
    assert theirs.problem == ours.problem
    if ours.ok:  # the hashes a claim is compared with: read only from a chain that verifies
        assert theirs.hashes == ours.hashes == {3: ours.hashes[3], 30: ours.hashes[30]}
    assert (change == "as written") == (ours.ok and ours.count == 48)
    if change == "a payload byte":
        assert ours.first_bad == 17


def test_they_agree_on_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "evidence.sqlite"
    varied_log(path)
    tamper(path, "DELETE FROM records")
    ours, theirs = verify(path), bundle_verify.walk_chain(path)
    assert (theirs.count, theirs.head, theirs.first_bad) == (0, "0" * 64, None)
    assert (ours.count, ours.head_hash, ours.ok) == (0, "0" * 64, True)


def test_a_copy_of_verify_py_outside_the_package_walks_the_same(tmp_path: Path) -> None:
    """What the bundle holds is this very file: run from a copy, it gives the same answer."""
    path = tmp_path / "evidence.sqlite"
    varied_log(path)
    shutil.copy(bundle_verify.__file__, tmp_path / "verify.py")
    source = (tmp_path / "verify.py").read_text()
    assert "import kent_ops" not in source
    assert "from kent_ops" not in source
    namespace: dict[str, object] = {"__name__": "copy", "__file__": str(tmp_path / "verify.py")}
    exec(compile(source, "verify.py", "exec"), namespace)  # noqa: S102 (the file under test)
    walk = namespace["walk_chain"](path)  # type: ignore[operator]
    assert (walk.count, walk.head) == (verify(path).count, verify(path).head_hash)


def _line(event: str = EVENT, **payload: object) -> bytes:
    """A witness line as a keeper writes it, whatever its payload (a keeper would refuse a
    bad one: these are lines someone else's tool, or a damaged file, could hold)."""
    body: dict[str, object] = {"record": 5, "hash": "ab" * 32}
    body.update(payload)
    good = entry_line(event=EVENT, received_at=T0, by="x", host="h", retained=False,
                      payload=b'{"record": 1, "hash": "' + b"ab" * 32 + b'"}')  # fmt: skip
    entry = json.loads(good)
    entry.update(event=event, payload=json.dumps(body))
    return json.dumps(entry).encode()


WITNESS_LINES = [
    _line(),
    b"",
    _line(record=9, hash="cd" * 32),
    _line(event="other"),
    b"not json",
    b'{"format": "kent-ops witness 1", "event": "kent-summer-fest-2027"}',
    _line().replace(b'"by": "x"', b'"by": null'),
    _line().replace(b'"host": "h"', b'"host": 3'),
    _line().replace(b'"received_at": "', b'"received_at": 7, "x": "'),
    json.dumps(
        {
            "format": "kent-ops witness 1",
            "event": EVENT,
            "payload": '{"record": 7, "hash": "' + "ef" * 32 + '"}',
        }
    ).encode(),  # fmt: skip
    json.dumps({"format": "kent-ops witness 1", "event": EVENT, "payload": 7}).encode(),
    _line(record=True),
    _line(record=-1),
    _line(hash="AB" * 32),
    _line()[:-20],
    "ü".encode("latin-1"),
    b"[]",
]


def test_verify_py_and_kent_ops_read_witness_files_alike() -> None:
    data = b"\n".join(line.rstrip(b"\n") for line in WITNESS_LINES)
    ours = read_witness(data, EVENT)
    theirs, skipped = bundle_verify.witness_entries(data, EVENT)
    assert [(e.line, e.record, e.hash) for e in ours.entries] == [
        (line, record, digest) for line, record, digest, _ in theirs
    ]
    assert [e.line for e in ours.entries] == [1, 3, 10]
    assert skipped == len(ours.skipped) == 13
