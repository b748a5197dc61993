"""``kent-ops bundle`` as counsel would use it: unzipped into an empty folder, checked by a
bare ``python3 -I verify.py`` on a machine where kent-ops is not installed.

The log is written by the real aggregator (``kent-ops run`` on a real Mosquitto), the
bundle taken while it writes, and a witness kept by a real subscriber through the same
keeper the dashboards, the notifier and the phones' hub use. Then each thing counsel
must be told of is done to a copy of the unzipped bundle, and verify.py must name the
record (or the file): one byte of a record changed, a record deleted, the head file
removed, a witness contradicted, a file in the manifest altered; and a log rewritten
whole, every hash recomputed, is caught by a witness kept elsewhere.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import wire_support
from live_support import TOPICS, Publisher, Watcher, ts, wait_until
from runs_support import Runs, kent_ops

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.broker.witness import WitnessKeeper, watch_checkpoints
from kent_ops.evidence import bundle_verify
from kent_ops.evidence.chain import verify
from kent_ops.evidence.log import read_records, record_hash

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

BARE = shutil.which("python3", path="/usr/bin:/bin")
"""The system's own Python: kent-ops is installed only in the project's virtualenv."""


class Witness:
    """A real subscriber keeping every checkpoint in a witness file, as an inspector's view does."""

    def __init__(self, broker: MosquittoBroker, path: Path) -> None:
        self.path = path
        self.keeper = WitnessKeeper(path, TOPICS.event_id, "inspector-insp-1").open()
        subscribed = threading.Event()
        self.client = make_client(parse_broker_url(broker.url))
        watch_checkpoints(self.client, TOPICS, self.keeper)
        self.client.on_connect = lambda c, *a: c.subscribe(TOPICS.checkpoint, qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        assert subscribed.wait(10)

    def holds(self, checkpoint: dict[str, object] | None) -> bool:
        """Whether the last checkpoint kept is ``checkpoint``."""
        lines = self.path.read_bytes().splitlines()
        return bool(lines) and json.loads(json.loads(lines[-1])["payload"]) == checkpoint

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
        self.keeper.close()


@pytest.fixture
def witness(broker: MosquittoBroker, tmp_path: Path) -> Iterator[Witness]:
    w = Witness(broker, tmp_path / "kept" / "insp-1.jsonl")
    yield w
    w.close()


def unzip(bundle: Path, folder: Path) -> Path:
    folder.mkdir()
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(folder)
    return folder


def bare_verify(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python3 -I verify.py`` in ``folder``, as counsel types it: no kent-ops anywhere."""
    assert BARE is not None
    return subprocess.run(
        [BARE, "-I", "verify.py", *args], cwd=folder, capture_output=True, text=True,
        timeout=60, check=False, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )  # fmt: skip


def bundle(runs: Runs, out: Path, *witnesses: Path) -> subprocess.CompletedProcess[str]:
    extra = [a for w in witnesses for a in ("--witness", str(w))]
    return kent_ops("bundle", "--permit", str(runs.permit), "--evidence", str(runs.evidence),
                    "--out", str(out), *extra)  # fmt: skip


def drop_triggers(log: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(log)
    for trigger in ("records_no_update", "records_no_delete"):
        conn.execute(f"DROP TRIGGER {trigger}")
    return conn


def reading_record(log: Path, seq: int) -> tuple[int, bytes]:
    """The id and payload of gate north's reading ``seq``."""
    payload = wire_support.gate_count(seq, ts(seq), 10 * seq, 0)
    (rid,) = [r.id for r in read_records(log) if r.kind == "message" and r.payload == payload]
    return rid, payload


def test_a_bundle_taken_while_the_aggregator_writes_verifies_and_names_what_was_changed(
    runs: Runs, watcher: Watcher, publisher: Publisher, witness: Witness, tmp_path: Path
) -> None:
    assert BARE is not None
    runs.serve(watcher, publisher, 1, 5)
    proc = runs.running(watcher, publisher, 6, 20)
    wait_until(lambda: witness.holds(runs.checkpoint()), 20, "the witness to keep the checkpoint")
    before = len(list(read_records(runs.evidence)))
    stop = threading.Event()

    def keep_sending() -> None:  # the aggregator commits all through the copy
        for seq in range(21, 5000):
            if stop.is_set():
                return
            publisher.gate("north", seq, seq, 10 * seq, 0)

    sender = threading.Thread(target=keep_sending)
    sender.start()
    try:
        made = bundle(runs, tmp_path / "evidence.zip", witness.path)
    finally:
        stop.set()
        sender.join(30)
    proc.terminate()
    assert proc.wait(30) == 0
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("bundle written to ")

    folder = unzip(tmp_path / "evidence.zip", tmp_path / "counsel")
    assert {p.name for p in folder.iterdir()} == {
        "README.txt", "verify.py", "manifest.json", "evidence.sqlite", "evidence.sqlite.head",
        "permit.toml", "report", "witness",
    }  # fmt: skip
    assert {"index.html", "findings.csv", "timeline.csv", "manifest.json"} <= {
        p.name for p in (folder / "report").iterdir()
    }
    no_kent_ops = subprocess.run([BARE, "-I", "-c", "import kent_ops"], cwd=folder,
                                 capture_output=True, timeout=30, check=False)  # fmt: skip
    assert no_kent_ops.returncode != 0
    manifest = json.loads((folder / "manifest.json").read_text())
    ok = bare_verify(folder)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    count, head = manifest["evidence"]["records"], manifest["evidence"]["head_hash"]
    assert ok.stdout == f"OK {count} {head}\n"
    assert ok.stderr == ""
    ours = verify(folder / "evidence.sqlite")  # the copy is consistent: a chain of its own
    assert (ours.ok, ours.count, ours.head_hash) == (True, count, head)
    # Taken while the aggregator went on committing: at least what the log held before the
    # copy began, at most what it holds at the end (how far it got depends on the machine).
    assert before <= count <= len(list(read_records(tmp_path / "evidence.sqlite")))

    # verify.py and kent-ops's own chain walk agree on the log the aggregator wrote
    theirs, live = bundle_verify.walk_chain(runs.evidence), verify(runs.evidence)
    assert (theirs.count, theirs.head, theirs.first_bad) == (live.count, live.head_hash, None)
    assert live.count > count  # the aggregator went on writing after the copy

    said_of = _tamperings(folder, tmp_path)
    assert said_of["one byte of a record"][0].startswith(
        f"FAIL record {said_of['record'][0]}: its content does not match its hash"
    )
    assert (
        said_of["a record deleted"][0]
        == f"FAIL record {said_of['record'][1]}: the record is missing"
    )
    assert said_of["the head file removed"] == [
        "FAIL file evidence.sqlite.head: listed in the manifest but missing"
    ]
    assert said_of["a file altered"] == [
        "FAIL file report/findings.csv: its SHA-256 is not the one the manifest lists"
    ]
    contradicted = said_of["a witness contradicted"]
    assert contradicted[0].startswith(f"FAIL record {said_of['record'][2]}: its hash in the log (")
    assert "is not the one witness witness/insp-1.jsonl (line " in contradicted[0]
    assert "kept by inspector-insp-1 at " in contradicted[0]
    assert contradicted[1:] == [
        "FAIL file witness/insp-1.jsonl: its SHA-256 is not the one the manifest lists"
    ]


def _tamperings(folder: Path, tmp_path: Path) -> dict[str, list[str]]:
    """Each change made to a fresh copy of the unzipped bundle, and what verify.py printed
    (every run exits 1); ``record``: the records the changes were made to."""
    said: dict[str, list[str]] = {}
    changed, _ = reading_record(folder / "evidence.sqlite", 13)
    deleted, _ = reading_record(folder / "evidence.sqlite", 17)

    def copy(name: str) -> Path:
        return Path(shutil.copytree(folder, tmp_path / name.replace(" ", "-")))

    def run(name: str, where: Path) -> None:
        done = bare_verify(where)
        assert done.returncode == 1, (name, done.stdout)
        said[name] = done.stdout.splitlines()

    where = copy("one byte of a record")
    _, payload = reading_record(where / "evidence.sqlite", 13)
    data = bytearray((where / "evidence.sqlite").read_bytes())
    assert data.count(payload) == 1
    data[data.find(payload) + payload.find(b"130")] ^= 0x01  # 130 persons read as 030
    (where / "evidence.sqlite").write_bytes(bytes(data))
    run("one byte of a record", where)

    where = copy("a record deleted")
    conn = drop_triggers(where / "evidence.sqlite")
    conn.execute("DELETE FROM records WHERE id = ?", (deleted,))
    conn.commit()
    conn.close()
    run("a record deleted", where)

    where = copy("the head file removed")
    (where / "evidence.sqlite.head").unlink()
    run("the head file removed", where)

    where = copy("a file altered")
    with (where / "report" / "findings.csv").open("a") as f:
        f.write("A-9999,nothing,happened\n")
    run("a file altered", where)

    where = copy("a witness contradicted")
    lines = (where / "witness" / "insp-1.jsonl").read_bytes().splitlines()
    entry = json.loads(lines[-1])
    point = json.loads(entry["payload"])
    entry["payload"] = json.dumps({**point, "hash": "0" * 64})
    lines[-1] = json.dumps(entry).encode()
    (where / "witness" / "insp-1.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    run("a witness contradicted", where)
    said["record"] = [changed, deleted, point["record"]]  # type: ignore[list-item]
    return said


def rewrite_whole(log: Path, seq: int) -> int:
    """Change reading ``seq`` and recompute every hash from there on, as someone who has the
    file and knows the chain would; the head file rewritten to match. Returns its record."""
    rid, payload = reading_record(log, seq)
    forged = payload.replace(b'"in_total":%d' % (10 * seq), b'"in_total":%d' % (1000 * seq))
    assert forged != payload
    rows = [r for r in read_records(log) if r.id >= rid - 1]
    conn = drop_triggers(log)
    prev = rows[0].hash
    for r in rows[1:]:
        body = forged if r.id == rid else r.payload
        at = r.received_at.isoformat(timespec="microseconds")
        prev = record_hash(prev, r.id, r.kind, at, r.topic, body, r.accepted, r.reason)
        conn.execute("UPDATE records SET payload = ?, hash = ? WHERE id = ?", (body, prev, r.id))
    conn.commit()
    conn.close()
    head = log.with_name(log.name + ".head")
    head.write_text(json.dumps({**json.loads(head.read_text()), "hash": prev}))
    return rid


def test_a_log_rewritten_whole_is_caught_only_by_a_witness_kept_elsewhere(
    runs: Runs, watcher: Watcher, publisher: Publisher, witness: Witness, tmp_path: Path
) -> None:
    runs.serve(watcher, publisher, 1, 5)
    runs.serve(watcher, publisher, 6, 20)
    wait_until(lambda: witness.holds(runs.checkpoint()), 20, "the witness to keep the checkpoint")
    rid = rewrite_whole(runs.evidence, 3)
    entries = [json.loads(line) for line in witness.path.read_bytes().splitlines()]
    line, first = next(
        (n, json.loads(e["payload"])) for n, e in enumerate(entries, 1)
        if json.loads(e["payload"])["record"] >= rid
    )  # fmt: skip
    who = f"kept by inspector-insp-1 at {entries[line - 1]['received_at']}"

    alone = kent_ops("verify", str(runs.evidence))
    assert alone.returncode == 0  # the chain and the head file alone cannot tell
    caught = kent_ops("verify", str(runs.evidence), "--witness", str(witness.path))
    assert caught.returncode == 1
    assert caught.stdout.startswith(f"FAIL record {first['record']}: its hash in the log (")
    assert f"is not the one witness {witness.path} (line {line}, {who}) names" in caught.stdout

    plain = bundle(runs, tmp_path / "plain.zip")
    assert plain.returncode == 0, plain.stderr
    folder = unzip(tmp_path / "plain.zip", tmp_path / "plain")
    assert bare_verify(folder).returncode == 0  # the bundle agrees with itself...
    theirs = bare_verify(folder, "--witness", str(witness.path))  # ...not with the inspector
    assert theirs.returncode == 1
    assert theirs.stdout.startswith(f"FAIL record {first['record']}: its hash in the log (")
    assert f"is not the one witness {witness.path} (line {line}, {who}) names" in theirs.stdout

    told = bundle(runs, tmp_path / "told.zip", witness.path)
    assert told.returncode == 1
    assert f"kent-ops: warning: record {first['record']}: its hash in the log" in told.stderr
    assert f"is not the one witness {witness.path} (line {line}, {who}) names" in told.stderr
    folder = unzip(tmp_path / "told.zip", tmp_path / "told")
    inside = bare_verify(folder)
    assert inside.returncode == 1
    assert inside.stdout.startswith(f"FAIL record {first['record']}: its hash in the log (")
    assert f"witness witness/insp-1.jsonl (line {line}, {who}) names" in inside.stdout
    assert inside.stdout.count("\n") == 1  # the files are as the manifest lists them
