"""The report claims no more than the law supports: a day that ends on time is KEPT, only
permit:G's grounds are tied to revocation, rounding-only breaches stand apart, and an
assembly of 500 or fewer is reported as the chapter reads it (docs/law.md)."""

from __future__ import annotations

import re
from pathlib import Path

from report_support import ScriptedLog, page_text, utc, write_permit

from kent_ops.report.build import build_report

MIN = 60
T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT, the window opens; it ends at 23:30 (48,600 s on)
END = 13 * 3600 + 30 * MIN


def section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match, anchor
    return page_text(match[1])


def staffed(log: ScriptedLog, nurses: int = 8) -> None:
    log.badge(0, "DR-1", "doctor")
    for k in range(nurses):
        log.badge(0, f"RN-{k}", "nurse")


def test_a_day_that_ends_on_time_with_every_duty_met_reads_kept(tmp_path: Path) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    staffed(log)
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.gate("north", 3600, 3000)  # 11:00: 3,000 present
    log.gate("north", END - 1, 3000)
    out_total = 0
    for minute in range(31):  # from 23:30, 100 leave a minute, nobody enters
        out_total = min(out_total + 100, 3000)
        log.gate("north", END + minute * MIN, 3000, out_total)
    log.close(END + 40 * MIN)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    data = outcome.data
    assert [f.rule for f in data.findings if f.severity != "data"] == ["dispersing"]
    assert data.verdict.word == "kept"
    assert outcome.exit_code == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "(permit-required)" not in section(page, "findings")
    law = section(page, "the-law")
    assert "No finding is a ground for revocation" in law
    assert "any person who caused the gathering of more than 500 persons (penalties:A)" in law


def test_only_permit_gs_grounds_are_tied_to_revocation(tmp_path: Path) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    staffed(log, nurses=1)  # 1 nurse for 4,100: the law needs 9
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.gate("north", 60, 4100)  # above the permitted 4,000 as well
    log.gate("north", 1200, 4100, 1000)
    log.close(1300)
    out = tmp_path / "report"
    data = build_report(permit, evidence, out).data
    grounds = {f.rule for f in data.findings if f.revocation_ground}
    assert "nurse-ratio" in grounds
    assert "max-at-one-time" not in grounds
    assert {f.rule for f in data.findings} >= {"nurse-ratio", "max-at-one-time"}
    law = section((out / "index.html").read_text(encoding="utf-8"), "the-law")
    assert "Grounds for revocation (permit:G)" in law
    grounds_part = law.split("Grounds for revocation (permit:G)", 1)[1]
    assert "(nurse-ratio)" in grounds_part
    assert "(max-at-one-time)" not in grounds_part.split("Who the law reaches")[0]


def test_a_breach_only_by_rounding_up_says_so_and_stands_apart(tmp_path: Path) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    staffed(log, nurses=2)
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.gate("north", 60, 1001)  # 1,001 need 3 by rounding up; 2 meet each whole 500
    log.gate("north", 1200, 1001, 1)
    log.close(1300)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    (nurses,) = [f for f in outcome.data.findings if f.rule == "nurse-ratio"]
    assert nurses.within_rounding
    assert (nurses.basis, nurses.proven, nurses.proven_s) == ("rounding", False, 0)
    assert nurses.apart[0].rests_on == (
        "2 nurses meet one for each whole 500 persons (the exact ratio)",
    )
    assert "only by rounding up" in nurses.worst_sentence
    assert outcome.data.distinct == []
    law = section((out / "index.html").read_text(encoding="utf-8"), "the-law")
    assert "Not proven: listed apart" in law
    assert "Within the rounding" in law
    assert outcome.data.verdict.word != "breached"


def test_an_assembly_of_500_or_fewer_is_no_one_elses_duty(tmp_path: Path) -> None:
    permit = write_permit(tmp_path)
    text = permit.read_text()
    text = text.replace("max_at_one_time = 4000", "max_at_one_time = 400")
    text = text.replace("[alerting]\n", "[alerting]\nhold_at = 400\nresume_below = 390\n")
    permit.write_text(text)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.gate("north", 60, 12)  # 12 present, nobody on duty: no duty binds them
    log.gate("north", 600, 501)  # 501: a permit for 400 covers no assembly over 500
    log.gate("north", 1200, 501, 100)
    log.close(1300)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    data = outcome.data
    assert [f.rule for f in data.findings if f.severity != "data"] == ["permit-required"]
    assert data.pre_event == []
    assert data.clean_up.status == "not applicable"
    assert data.verdict.word == "breached"
    page = page_text((out / "index.html").read_text(encoding="utf-8"))
    assert "no permit is needed for at most 400 persons at one time" in page
