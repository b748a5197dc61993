"""Clean-up (permit:F) on real logs: the deadline is the end of the fifth local day after
the date the assembly was last on, across a daylight-saving change and for an assembly
that ran past its window."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from report_support import ScriptedLog, page_text, write_permit

from kent_ops.report.build import build_report

KENT = ZoneInfo("America/New_York")
LONG_SILENCE_S = 10_000_000  # sensors quiet for days after the event are not "offline" here


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=KENT)


def seconds(log: ScriptedLog, t: datetime) -> float:
    return (t - log.t0).total_seconds()


@pytest.mark.slow  # a report over a week of log, built twice
@pytest.mark.parametrize(
    ("marked", "status"),
    [
        # 23:30 EST on 8 November: in time. Counting 120 h from 22:00 EDT on the 3rd would
        # have ended the period at 21:00 EST on the 8th, and called this late.
        (local(2027, 11, 8, 23, 30), "done"),
        # Midnight ending the 8th, the deadline itself: too late to record it, and no
        # deficiency was found, so the Town holds no record in time (a warning).
        (local(2027, 11, 9, 0, 0), "not recorded"),
    ],
)
def test_the_deadline_crosses_a_daylight_saving_change(
    tmp_path: Path, marked: datetime, status: str
) -> None:
    permit = write_permit(
        tmp_path,
        windows=[("2027-11-03T18:00:00-04:00", "2027-11-03T23:00:00-04:00")],
        stale_after_s=LONG_SILENCE_S,
    )
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, local(2027, 11, 3, 18, 0))
    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    log.gate("north", 0, 200)
    log.gate("north", seconds(log, local(2027, 11, 3, 22, 0)), 200, 200)  # all gone at 22:00
    log.inspector("insp-1", "inspection", seconds(log, marked), item="F", result="ok")
    log.gate("north", seconds(log, local(2027, 11, 10, 12, 0)), 200, 200)
    log.close(seconds(log, local(2027, 11, 10, 12, 0)) + 1)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    cu = outcome.data.clean_up
    assert cu.assembly_end == local(2027, 11, 3, 22, 0)
    assert cu.deadline is not None
    assert cu.deadline.isoformat() == "2027-11-09T00:00:00-05:00"
    assert cu.status == status
    assert outcome.exit_code == 0  # neither is a breach: "not recorded" is a warning
    text = page_text((out / "index.html").read_text(encoding="utf-8"))
    assert "by the end of Monday 8 November 2027 (midnight)" in text
    assert "then EST (UTC−05:00) from 02:00 EDT on Sunday 7 November 2027" in text


def test_an_assembly_that_runs_past_its_window_ends_when_it_was_last_on(tmp_path: Path) -> None:
    """620 guests stay past 23:30 and leave at 00:50: the assembly ended on the 5th."""
    permit = write_permit(tmp_path, stale_after_s=LONG_SILENCE_S)  # window 10:00 to 23:30
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, local(2027, 7, 4, 10, 0))
    log.badge(0, "DR-1", "doctor")
    for k in range(1, 3):
        log.badge(0, f"RN-{k}", "nurse")
    log.gate("north", 0, 620)
    log.gate("north", seconds(log, local(2027, 7, 5, 0, 40)), 620)
    log.gate("north", seconds(log, local(2027, 7, 5, 0, 50)), 620, 620)
    # Counted from the window's scheduled end this would be late (after 9 July, 23:30).
    ok_at = local(2027, 7, 10, 20, 0)
    log.inspector("insp-1", "inspection", seconds(log, ok_at), item="F", result="ok")
    log.gate("north", seconds(log, local(2027, 7, 12, 9, 0)), 620, 620)
    log.close(seconds(log, local(2027, 7, 12, 9, 0)) + 1)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    data = outcome.data
    cu = data.clean_up
    assert cu.assembly_end == local(2027, 7, 5, 0, 50)
    assert cu.deadline is not None
    assert cu.deadline.isoformat() == "2027-07-11T00:00:00-04:00"
    assert (cu.status, cu.satisfied_by and cu.satisfied_by.at) == ("done", ok_at)
    # Above 500 after the window: an hour to disperse (a warning), then an assembly
    # without a permit from 00:30 to 00:50.
    (leaving,) = [f for f in data.findings if f.rule == "dispersing"]
    assert (leaving.start, leaving.end) == (local(2027, 7, 4, 23, 30), local(2027, 7, 5, 0, 30))
    (late,) = [f for f in data.findings if f.rule == "permit-required"]
    assert (late.start, late.end) == (local(2027, 7, 5, 0, 30), local(2027, 7, 5, 0, 50))
    # Past midnight but after the last window: the overrun is permit-required and nothing
    # more; housing binds only where the night was contemplated (docs/law.md).
    assert [(d.day.isoformat(), d.rule) for d in data.distinct] == [
        ("2027-07-05", "permit-required"),
    ]
    text = page_text((out / "index.html").read_text(encoding="utf-8"))
    assert "The assembly was last on at 2027-07-05 00:50:00, so it ended on Monday 5 July" in text
    assert "by the end of Saturday 10 July 2027 (midnight)" in text
