"""The report against the log's head file: a cut tail reads as an incomplete record, never as
a complete one, in the verdict, the notice above it, under data quality and in the exit code.

The same through the real ``kent-ops run`` and a lost ``-wal`` is in
tests/integration/test_log_head.py.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_support import kent_ops
from report_support import ScriptedLog, page_text, utc, write_permit

from kent_ops.evidence.log import read_records
from kent_ops.report.build import build_report

T0 = utc(2027, 7, 4, 14, 0)  # 10:00 in Kent


def quiet_event(tmp_path: Path) -> tuple[Path, Path]:
    """A small day with no breach: a doctor and a nurse on duty, a few hundred persons."""
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    for k in range(10):
        log.gate("north", 30 * k, 20 * k)
    log.close(301)
    return permit, evidence


def head_file(evidence: Path, record: int | None = None) -> Path:
    """The head file the aggregator would have written at the log's end (or at ``record``)."""
    rows = list(read_records(evidence))
    row = rows[-1] if record is None else rows[record - 1]
    path = evidence.with_name(evidence.name + ".head")
    path.write_text(json.dumps({"record": row.id, "hash": row.hash, "ts": None}))
    return path


def cut(evidence: Path, keep: int) -> None:
    conn = sqlite3.connect(evidence)
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute("DELETE FROM records WHERE id > ?", (keep,))
    conn.commit()
    conn.close()


def test_a_log_that_reaches_its_head_file_says_so(tmp_path: Path) -> None:
    permit, evidence = quiet_event(tmp_path)
    head_file(evidence)
    outcome = build_report(permit, evidence, tmp_path / "report")
    data = outcome.data
    assert data.head is not None
    assert data.head.state == "agrees"
    assert not any("head file" in why for why in data.incomplete)
    # The scripted log ends at 10:05, long before the window: incomplete for that alone.
    assert data.incomplete == ["the evidence log ends before the last permitted window ended"]
    page = page_text((tmp_path / "report" / "index.html").read_text(encoding="utf-8"))
    assert "The log's end Its head file (evidence.sqlite.head) names record" in page
    assert outcome.manifest["evidence"]["head_file"] == "agrees"


def test_a_cut_tail_makes_the_record_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    permit, evidence = quiet_event(tmp_path)
    total = len(list(read_records(evidence)))
    head_file(evidence)
    cut(evidence, 9)
    said = f"the log holds 9 records but its head file names record {total}"
    ran = kent_ops(capsys, "report", "--permit", str(permit), "--evidence", str(evidence),
                   "--out", str(tmp_path / "report"))  # fmt: skip
    assert ran.returncode == 1  # a check failed: the report is written and says which
    assert ran.stdout.splitlines()[-1].startswith(
        f"RECORD INCOMPLETE: no breach was proven, but the record is incomplete: {said}: "
        "committed records are missing from the log; "
    )
    assert "9 records verified" in ran.stdout
    assert ran.stderr == (
        f"kent-ops: warning: {said}: committed records are missing from the log; the report "
        "covers only the records the log holds\n"
    )
    page = page_text((tmp_path / "report" / "index.html").read_text(encoding="utf-8"))
    notice = page.split("RECORD INCOMPLETE", 1)[1]
    assert said in notice.split("Nothing after the log's end")[0]
    quality = page.split("The log's end", 1)[1]
    assert quality.startswith(f" {said[0].upper()}{said[1:]}: committed records are missing")
    manifest = json.loads((tmp_path / "report" / "manifest.json").read_text())
    assert manifest["evidence"]["head_file"] == "contradicted"


def test_another_record_where_the_head_file_points_is_incomplete_too(tmp_path: Path) -> None:
    permit, evidence = quiet_event(tmp_path)
    head = head_file(evidence)
    data = json.loads(head.read_text())
    head.write_text(json.dumps({**data, "hash": "ab" * 32}))
    outcome = build_report(permit, evidence, tmp_path / "report")
    assert outcome.data.head is not None
    assert outcome.data.head.state == "contradicted"
    assert outcome.data.incomplete[0].startswith(f"record {data['record']}'s hash in the log")
    assert outcome.exit_code == 1


def test_no_head_file_is_said_under_data_quality_only(tmp_path: Path) -> None:
    permit, evidence = quiet_event(tmp_path)
    outcome = build_report(permit, evidence, tmp_path / "report")
    assert outcome.data.head is not None
    assert outcome.data.head.state == "missing"
    assert outcome.data.incomplete == [
        "the evidence log ends before the last permitted window ended"
    ]
    page = page_text((tmp_path / "report" / "index.html").read_text(encoding="utf-8"))
    assert (
        "There is no head file beside the log (evidence.sqlite.head), so nothing here shows "
        "whether records were cut from its end."
    ) in page
    assert not any("head file" in why for why in outcome.data.incomplete)


def test_a_damaged_head_file_is_an_incomplete_record_not_a_refusal(tmp_path: Path) -> None:
    permit, evidence = quiet_event(tmp_path)
    evidence.with_name("evidence.sqlite.head").write_text("{")
    outcome = build_report(permit, evidence, tmp_path / "report")
    assert outcome.data.head is not None
    assert outcome.data.head.state == "unreadable"
    assert outcome.data.incomplete[0].startswith("head file ")
    assert outcome.exit_code == 1
