"""The report checks every engine snapshot in the log against its own replay.

A log is written as the aggregator writes it (a live engine on the wall clock, tick
records, alerts), with engine snapshots among its records: faithful ones, one whose
state was altered before it was written (a chain record like any other, so only the
comparison can find it), and one of another program version. The report still replays
from the first record; its data-quality section lists the snapshot that differs, with
what differs, and the one it could not compare.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
from report_support import ScriptedLog, utc, write_permit

from kent_ops.report.build import build_report

T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT


def snapshot(log: ScriptedLog, seconds: float, **state_changes: object) -> int:
    """Write the engine's state as the service does: its changes collected, after a tick."""
    log.tick(seconds, status=False)
    data = log.engine.snapshot({"storage_alerts": 0})
    if state_changes:
        doc = msgspec.json.decode(data)
        for key, value in state_changes.items():
            if key == "version":
                doc["version"] = value
            else:
                doc["state"]["counts"][key] = value
        data = msgspec.json.encode(doc)
    rid, _ = log.log.append("snapshot", log.at(seconds), payload=data)
    log.log.commit()
    return rid


def test_a_snapshot_that_differs_from_the_replay_is_a_data_quality_finding(
    tmp_path: Path,
) -> None:
    permit = write_permit(tmp_path, pending_s=10, clear_s=30)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0, clock="wall")
    log.badge(0, "DR-1", "doctor")
    log.gate("north", 1, 800)
    good = [snapshot(log, 5)]
    log.gate("north", 20, 1400, 100)
    good.append(snapshot(log, 30))
    altered = snapshot(log, 31, peak=99_999)
    log.lot("lot-a", 40, 590)
    other = snapshot(log, 50, version="0.0.1")
    log.gate("north", 60, 1500, 1400)
    good.append(snapshot(log, 100))
    log.close(120)

    outcome = build_report(permit, evidence, tmp_path / "report")
    checks = outcome.data.collector.snapshots
    by_record = {c.record: c for c in checks.results}
    assert sorted(by_record) == sorted([*good, altered, other])
    assert all(by_record[r].matched is True for r in good)
    assert by_record[altered].matched is False
    assert by_record[altered].detail == [
        "state.counts.peak: 1300 by the engine, 99999 in the snapshot"
    ]
    assert by_record[other].matched is None
    assert "kent-ops 0.0.1" in by_record[other].detail[0]
    # The proof is the replay from the start: its findings do not depend on the snapshots.
    assert outcome.data.comparison.equal
    page = (tmp_path / "report" / "index.html").read_text()
    assert "Engine snapshots that differ from the replay" in page
    assert f"record {altered:,}" in page
    assert "state.counts.peak: 1300 by the engine, 99999 in the snapshot" in page
    assert "1 snapshot not compared" in page


def test_a_log_of_faithful_snapshots_says_each_equals_the_replay(tmp_path: Path) -> None:
    permit = write_permit(tmp_path, pending_s=10, clear_s=30)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0, clock="sensor")
    log.gate("north", 1, 800)
    snapshot(log, 2)
    log.lot("lot-a", 40, 590)
    snapshot(log, 41)
    log.close(60)
    outcome = build_report(permit, evidence, tmp_path / "report")
    assert [c.matched for c in outcome.data.collector.snapshots.results] == [True, True]
    page = (tmp_path / "report" / "index.html").read_text()
    assert "2 engine snapshots" in page
    assert "every one equal" in page
    assert "differ from the replay" not in page
