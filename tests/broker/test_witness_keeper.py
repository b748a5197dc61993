"""The witness keeper: each checkpoint appended whole, once, by any number of processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kent_ops.broker.witness import (
    WitnessError,
    WitnessKeeper,
    default_witness_path,
)
from kent_ops.commands.witnessing import open_witness
from kent_ops.core.witness import read_witness

EVENT = "kent-summer-fest-2027"


def point(record: int) -> bytes:
    return json.dumps({"record": record, "hash": f"{record:064x}", "ts": None}).encode()


def test_each_checkpoint_is_kept_once_as_received(tmp_path: Path) -> None:
    path = tmp_path / "state" / "witness" / f"{EVENT}.jsonl"
    at = datetime(2027, 7, 4, 18, 0, tzinfo=UTC)
    with WitnessKeeper(path, EVENT, "inspector-alice", host="laptop") as keeper:
        assert keeper.keep(point(10), retained=True, received_at=at)
        assert not keeper.keep(point(10), retained=True)  # the retained one, again at a reconnect
        assert not keeper.keep(b"")  # a retained checkpoint taken down
        assert not keeper.keep(b"not json")  # never a checkpoint: not kept
        assert keeper.keep(point(20))
        assert keeper.kept == 2
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[0])["payload"].encode() == point(10)
    assert json.loads(lines[0])["received_at"] == "2027-07-04T18:00:00.000000+00:00"
    read = read_witness(path.read_bytes(), EVENT)
    assert [(e.record, e.by) for e in read.entries] == [
        (10, "inspector-alice"),
        (20, "inspector-alice"),
    ]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    with WitnessKeeper(path, EVENT, "inspector-alice") as again:  # appended to, never truncated
        again.keep(point(30))
    assert [e.record for e in read_witness(path.read_bytes(), EVENT).entries] == [10, 20, 30]


KEEP_MANY = """
import sys
from pathlib import Path
from kent_ops.broker.witness import WitnessKeeper
who = sys.argv[2]
with WitnessKeeper(Path(sys.argv[1]), "kent-summer-fest-2027", who) as keeper:
    for n in range(1, 301):
        keeper.keep(b'{"record": %d, "hash": "%064x"}' % (n, n))
"""


@pytest.mark.timeout(60)
def test_processes_sharing_one_file_never_interleave_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    procs = [
        subprocess.Popen([sys.executable, "-c", KEEP_MANY, str(path), f"inspector-{who}"])
        for who in ("a", "b", "c")
    ]
    assert [p.wait(50) for p in procs] == [0, 0, 0]
    read = read_witness(path.read_bytes(), EVENT)
    assert read.skipped == []
    assert len(read.entries) == 900
    for who in ("a", "b", "c"):
        assert [e.record for e in read.entries if e.by == f"inspector-{who}"] == list(range(1, 301))


def test_a_file_that_cannot_be_written_stops_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "witness"
    keeper = WitnessKeeper(folder / "w.jsonl", EVENT, "deputy-north").open()
    keeper.keep(point(1))
    keeper.close()
    folder.rename(tmp_path / "aside")
    folder.write_text("")  # a file where the folder was: no one can write there, root neither
    assert not keeper.keep(point(2))  # said, not raised: the view goes on
    assert keeper.problem is not None
    assert keeper.problem.startswith(f"witness file {folder / 'w.jsonl'} cannot be written (")
    assert not keeper.keep(point(3))
    assert [r.getMessage() for r in caplog.records].count(keeper.problem) == 1  # said once
    folder.unlink()
    (tmp_path / "aside").rename(folder)
    assert keeper.keep(point(4))  # and carries on once the file can be written again
    assert keeper.problem is None
    assert [e.record for e in read_witness((folder / "w.jsonl").read_bytes(), EVENT).entries] == [
        1,
        4,
    ]


def test_the_default_is_one_file_an_event_in_the_state_folder(tmp_path: Path) -> None:
    assert default_witness_path(EVENT) == Path(
        os.path.expanduser(f"~/.local/state/kent-ops/witness/{EVENT}.jsonl")
    )
    assert default_witness_path(EVENT, tmp_path) == tmp_path / f"{EVENT}.jsonl"


def test_a_named_file_is_refused_and_the_default_only_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    bad = blocker / "w.jsonl"  # a folder that is a file: no one can write here, root neither
    with pytest.raises(WitnessError, match=f"witness file {bad} cannot be written"):
        open_witness(str(bad), tmp_path / "default.jsonl", EVENT, "x")
    assert open_witness(None, bad, EVENT, "x") is None
    err = capsys.readouterr().err
    assert err.startswith(f"kent-ops: warning: witness file {bad} cannot be written (")
    assert err.endswith(
        "); the checkpoints received are not kept as a witness (give --witness FILE)\n"
    )
    assert err.count("\n") == 1
    keeper = open_witness(None, tmp_path / "default.jsonl", EVENT, "x")
    assert keeper is not None
    keeper.close()
