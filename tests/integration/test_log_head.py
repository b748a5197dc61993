"""A log that lost committed records from its end, told by the real ``verify`` and ``report``.

``kent-ops run`` (a process, on a real Mosquitto) writes the log and its head file; then

- the log's tail is cut (its last records deleted, the head file left beside it), as an
  insider would to drop what the end of the day recorded;
- a running aggregator is SIGKILLed and its ``-wal`` deleted (a crash, then a clean-up
  of "stray" files): the committed records still in the ``-wal`` are gone.

Each time ``kent-ops verify`` exits 1 naming the first record missing and the record
the head file names, and ``kent-ops report`` writes the report but says it in its
verdict, above it ("RECORD INCOMPLETE"), under data quality, on stderr, and exits 1.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest
from live_support import Publisher, Watcher
from runs_support import Runs, kent_ops

from kent_ops.evidence.log import read_records

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def assert_told(runs: Runs, out: Path, left: int, named: int) -> None:
    """``verify`` and ``report`` both say the log holds ``left`` records of ``named``."""
    said = f"the log holds {left} records but its head file names record {named}"
    verify = kent_ops("verify", str(runs.evidence))
    assert (verify.returncode, verify.stderr) == (1, "")
    assert verify.stdout == f"FAIL record {left + 1}: {said}\n"

    report = kent_ops(
        "report", "--permit", str(runs.permit), "--evidence", str(runs.evidence), "--out", str(out)
    )
    assert report.returncode == 1, report.stderr
    assert "Traceback" not in report.stderr
    assert (
        f"kent-ops: warning: {said}: committed records are missing from the log; the report "
        "covers only the records the log holds\n"
    ) in report.stderr
    assert f"{left:,} records verified" in report.stdout
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '<div class="word">RECORD INCOMPLETE</div>' in page
    notice = page.split('<div class="incomplete">', 1)[1].split("</div></div>")[0]
    assert f"<li>{said}: committed records are missing from the log</li>" in notice
    quality = page.split("<h3>The log's end</h3>", 1)[1].split("</div>")[0]
    assert f"{said[0].upper()}{said[1:]}: committed records are missing" in quality
    verdict = report.stdout.splitlines()[-1]  # the verdict is the command's last line
    assert verdict.startswith("RECORD INCOMPLETE: no breach was proven, but the record is "
                              f"incomplete: {said}: committed records are missing")  # fmt: skip


def test_a_cut_tail_is_told_by_verify_and_report(
    runs: Runs, watcher: Watcher, publisher: Publisher, tmp_path: Path
) -> None:
    runs.serve(watcher, publisher, 1, 40)
    total = len(list(read_records(runs.evidence)))
    assert runs.head()["record"] == total  # a clean stop writes the last head
    keep = total // 2
    conn = sqlite3.connect(runs.evidence)
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute("DELETE FROM records WHERE id > ?", (keep,))
    conn.commit()
    conn.close()
    assert_told(runs, tmp_path / "report", keep, total)


def test_a_lost_wal_after_a_sigkill_is_told_by_verify_and_report(
    runs: Runs, watcher: Watcher, publisher: Publisher, tmp_path: Path
) -> None:
    runs.serve(watcher, publisher, 1, 5)  # a clean stop: these records are in the main file
    proc = runs.running(watcher, publisher, 6, 60)
    committed = len(list(read_records(runs.evidence)))  # the -wal's records too
    head = runs.head_reaches(committed)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(10) == -signal.SIGKILL
    runs.evidence.with_name("evidence.sqlite-wal").unlink()
    runs.evidence.with_name("evidence.sqlite-shm").unlink(missing_ok=True)
    left = len(list(read_records(runs.evidence)))
    assert left < head["record"]  # the -wal held committed records the head file names
    assert_told(runs, tmp_path / "report", left, head["record"])
