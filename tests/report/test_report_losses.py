"""Nothing acknowledged is lost unsaid, in the report: every gap of every sensor and each
broker restart under data quality, and the stretches that rest on them indeterminate,
the replay equal to what was published live (docs/protocol.md, "Counting")."""

from __future__ import annotations

import re
from pathlib import Path

from report_support import ScriptedLog, page_text, utc, write_permit

from kent_ops.report.build import build_report

MIN = 60
T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT, the window opens
RESTARTED = "its uptime fell from 9,000 s to 2 s"


def section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match, anchor
    return page_text(match[1])


def test_a_gap_and_a_broker_restart_are_listed_and_what_rests_on_them_is_not_proven(
    tmp_path: Path,
) -> None:
    """Two nurses and no doctor with 1,000 present from 11:00 to 13:00. The first-aid
    reader's seq 4–9 never arrive (11:30) until it re-states its roster (12:00); the
    broker restarts at 12:30 and every sensor is heard again by 12:31."""
    permit = write_permit(tmp_path, pending_s=0, clear_s=0)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.badge(0, "RN-0", "nurse")
    log.badge(0, "RN-1", "nurse")
    for minute in range(181):  # counters and lots report every minute: never silent
        at = minute * MIN
        log.gate("north", at, 1000 if minute >= 60 else 0)  # 1,000 from 11:00
        log.gate("south", at, 0)
        log.lot("lot-a", at, 100)
        log.lot("lot-b", at, 100)
        if minute == 90:  # 11:30: seq 3 to 9 sent, only 3 and 10 reach the log
            log.badge(at, "SEC-1", "security")
            log.badge(at, "SEC-2", "security", seq=10)
        if minute == 120:  # 12:00: the reader re-states who is on duty there
            log.roster(at, ("RN-0", "nurse"), ("RN-1", "nurse"), ("SEC-1", "security"))
        if minute == 150:  # 12:30, after the gates and lots have reported
            log.broker_restarted(at, RESTARTED)
        if minute == 151:
            log.roster(at, ("RN-0", "nurse"), ("RN-1", "nurse"))
    log.badge(180 * MIN, "DR-1", "doctor")  # 13:00
    log.close(181 * MIN)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    data = outcome.data
    assert data.comparison.equal, data.comparison.problems
    (doctor,) = [f for f in data.findings if f.rule == "doctor-on-duty"]
    gap = "staff station first-aid roster unknown since a gap (seq 4–9)"
    assert [(x.basis, x.start, x.end) for x in doctor.stretches] == [
        ("measured", utc(2027, 7, 4, 15, 0), utc(2027, 7, 4, 15, 30)),
        ("indeterminate", utc(2027, 7, 4, 15, 30), utc(2027, 7, 4, 16, 0)),
        ("measured", utc(2027, 7, 4, 16, 0), utc(2027, 7, 4, 16, 30)),
        ("indeterminate", utc(2027, 7, 4, 16, 30), utc(2027, 7, 4, 16, 31)),
        ("measured", utc(2027, 7, 4, 16, 31), utc(2027, 7, 4, 17, 0)),
    ]
    assert doctor.apart[0].rests_on == (gap,)
    assert "gate north not heard since the broker restarted" in doctor.apart[1].rests_on
    assert "staff station first-aid not heard since the broker restarted" in (
        doctor.apart[1].rests_on
    )
    rules = [f.rule for f in data.findings]
    assert rules.count("sensor-gap") == 1
    assert rules.count("broker-restarted") == 1
    page = (out / "index.html").read_text(encoding="utf-8")
    quality = section(page, "data-quality")
    assert (
        "Messages never received 1 gap in the sensors' seq: 6 messages the sensors sent "
        "never reached the log."
    ) in quality
    assert "badge reader first-aid seq 4–9 6" in quality
    assert "Broker restarts The event's broker restarted 1 time" in quality
    assert RESTARTED in quality
    assert "the event's broker restarted (see Broker restarts) (1 time)" in quality
    assert gap in quality  # the time the figures were in doubt, and why


def test_a_report_of_a_day_without_loss_says_so(tmp_path: Path) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    for minute in range(3):
        log.gate("north", minute * MIN, 10 * minute)
    log.close(3 * MIN)
    out = tmp_path / "report"
    build_report(permit, evidence, out)
    quality = section((out / "index.html").read_text(encoding="utf-8"), "data-quality")
    assert "No sensor's seq skipped a number" in quality
    assert "No restart of the event's broker was recorded." in quality
