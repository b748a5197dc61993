"""Opening an existing log refuses, in one sentence, a file that is not this event's log.

The meta table names the event and the schema version; the records table declares each
field's type. A log of another event, of another schema version, or whose records table
declares a field of another type (a hand-made or foreign file) is refused before a
record is read or written, by :meth:`EvidenceLog.open` and so by the service, which
opens its log that way before it connects to anything.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from live_support import ROOT

from kent_ops.broker.client import parse_broker_url
from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import EvidenceError, EvidenceLog, format_time, json_bytes, verify
from kent_ops.evidence.records import GENESIS_HASH, SCHEMA, record_hash
from kent_ops.service.aggregator import Aggregator, permit_sha256

PERMIT = load_permit(ROOT / "examples" / "permit.toml")
EVENT = PERMIT.event_id
SHA = permit_sha256(PERMIT)
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
NOWHERE = parse_broker_url("mqtt://127.0.0.1:9")
"""A broker address nothing listens on: a refused log must be refused before connecting."""


def hand_made(
    path: Path,
    *,
    event: str = EVENT,
    version: str | None = "2",
    schema: str = SCHEMA,
) -> None:
    """A log with the meta and the table layout given, holding a true opening record."""
    conn = sqlite3.connect(path)
    conn.executescript(schema)
    meta = {"event_id": event, "permit_sha256": SHA, "created_at": format_time(T0)}
    if version is not None:
        meta["schema_version"] = version
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    opened = json_bytes({"event": "opened", "event_id": event, "permit_sha256": SHA})
    at = format_time(T0)
    digest = record_hash(GENESIS_HASH, 1, "system", at, None, opened, None, None)
    conn.execute(
        "INSERT INTO records (id, kind, received_at, topic, payload, accepted, reason, hash) "
        "VALUES (1, 'system', ?, NULL, ?, NULL, NULL, ?)",
        (at, opened, digest),
    )
    conn.commit()
    conn.close()


def stored(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Every stored row of both tables."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = conn.execute("SELECT * FROM meta ORDER BY key").fetchall()
        return meta, conn.execute("SELECT * FROM records ORDER BY id").fetchall()
    finally:
        conn.close()


# (what the file is, how to make it, what the one sentence must name)
CASES = {
    "another-event": (dict(event="kent-fall-fair-2027"), r"of event 'kent-fall-fair-2027', not of"),
    "schema-1": (dict(version="1"), r"schema version 1; this kent-ops reads and writes version 2"),
    "schema-3": (dict(version="3"), r"schema version 3; this kent-ops reads and writes version 2"),
    "no-schema": (dict(version=None), r"schema version None"),
    "payload-text": (
        dict(schema=SCHEMA.replace("payload BLOB NOT NULL", "payload TEXT NOT NULL")),
        "field types",
    ),
    "accepted-text": (
        dict(schema=SCHEMA.replace("accepted INTEGER,", "accepted TEXT,")),
        "field types",
    ),
    "id-not-key": (
        dict(schema=SCHEMA.replace("id INTEGER PRIMARY KEY", "id INTEGER NOT NULL")),
        "field types",
    ),
    "topic-blob": (
        dict(schema=SCHEMA.replace("topic TEXT,", "topic BLOB,")),
        "field types",
    ),
    "hash-nullable": (
        dict(schema=SCHEMA.replace("hash TEXT NOT NULL", "hash TEXT")),
        "field types",
    ),
    "extra-field": (
        dict(schema=SCHEMA.replace("hash TEXT NOT NULL", "hash TEXT NOT NULL, note TEXT")),
        "field types",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_writer_refuses_it_in_one_sentence_naming_what_is_wrong(
    tmp_path: Path, case: str
) -> None:
    changes, names = CASES[case]
    path = tmp_path / "e.sqlite"
    hand_made(path, **changes)  # type: ignore[arg-type]
    before = stored(path)
    with pytest.raises(EvidenceError, match=names) as caught:
        EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA)
    sentence = str(caught.value)
    assert sentence.startswith(str(path))
    assert "\n" not in sentence
    assert stored(path) == before  # refused before anything was written


def test_the_hand_made_log_itself_is_sound(tmp_path: Path) -> None:
    """The refusals above are for what was changed, not for a broken file."""
    path = tmp_path / "e.sqlite"
    hand_made(path)
    assert verify(path).ok
    with EvidenceLog.open(path, event_id=EVENT, permit_sha256=SHA) as log:
        assert log.head[0] == 1


@pytest.mark.parametrize("case", ["another-event", "schema-1", "payload-text"])
def test_the_service_refuses_it_before_connecting(tmp_path: Path, case: str) -> None:
    changes, names = CASES[case]
    path = tmp_path / "e.sqlite"
    hand_made(path, **changes)  # type: ignore[arg-type]
    agg = Aggregator(PERMIT, path, NOWHERE, clock="sensor")
    with pytest.raises(EvidenceError, match=names):
        agg.start()
    assert not agg.connected.is_set()


def test_kent_ops_run_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    hand_made(path, event="kent-fall-fair-2027")
    proc = subprocess.run(
        [sys.executable, "-m", "kent_ops", "run", "--permit",
         str(ROOT / "examples" / "permit.toml"), "--evidence", str(path),
         "--broker", "mqtt://127.0.0.1:9"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("kent-ops: ")
    assert "of event 'kent-fall-fair-2027', not of 'kent-summer-fest-2027'" in proc.stderr
