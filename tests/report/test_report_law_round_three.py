"""A finding claims only what the record proves (docs/law.md, the law's third reading):
the report splits each finding into its stretches, proves only the measured ones, lists
the rest apart with what they rest on, and keeps brief gaps, staff beside attendance and
the time figures were in doubt on the record."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from report_support import TOPICS, ScriptedLog, page_text, utc, write_permit

from kent_ops.report.build import build_report

MIN = 60
T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT, the window opens


def section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match, anchor
    return page_text(match[1])


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_badge_reader_offline_mid_breach_is_proven_only_while_it_reported(
    tmp_path: Path,
) -> None:
    """No doctor with 1,000 present from 11:00 to 13:00; the first-aid badge reader was
    offline from 11:30 to 12:30. Only the two measured half hours are proven."""
    permit = write_permit(tmp_path, pending_s=0, clear_s=0)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    for k in range(2):
        log.badge(0, f"RN-{k}", "nurse")
    for minute in range(181):  # counters and lots report every minute: never silent
        log.gate("north", minute * MIN, 1000 if minute >= 60 else 0)  # 1,000 from 11:00
        log.gate("south", minute * MIN, 0)
        log.lot("lot-a", minute * MIN, 100)
        log.lot("lot-b", minute * MIN, 100)
        if minute == 90:
            log.send(TOPICS.availability("first-aid"), b"offline", 90 * MIN)  # 11:30
        if minute == 150:
            log.send(TOPICS.availability("first-aid"), b"online", 150 * MIN)  # 12:30
    log.badge(180 * MIN, "DR-1", "doctor")  # 13:00
    log.close(181 * MIN)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    (doctor,) = [f for f in outcome.data.findings if f.rule == "doctor-on-duty"]
    assert [(x.basis, x.start, x.end) for x in doctor.stretches] == [
        ("measured", utc(2027, 7, 4, 15, 0), utc(2027, 7, 4, 15, 30)),
        ("indeterminate", utc(2027, 7, 4, 15, 30), utc(2027, 7, 4, 16, 30)),
        ("measured", utc(2027, 7, 4, 16, 30), utc(2027, 7, 4, 17, 0)),
    ]
    assert doctor.apart[0].rests_on == ("staff station first-aid offline",)
    (row,) = [r for r in rows(out / "findings.csv") if r["rule"] == "doctor-on-duty"]
    assert (row["duration_s"], row["proven_s"], row["basis"]) == ("7200", "3600", "mixed")
    assert row["uncertain"] == "true"
    timeline = {r["minute"][11:16]: r["uncertain"] for r in rows(out / "timeline.csv")}
    assert (timeline["11:29"], timeline["11:30"], timeline["12:29"], timeline["12:30"]) == (
        "0", "1", "1", "0",
    )  # fmt: skip
    assert outcome.data.comparison.equal, outcome.data.comparison.problems
    page = (out / "index.html").read_text(encoding="utf-8")
    law = section(page, "the-law")
    assert "Not proven: listed apart" in law
    assert "staff station first-aid offline" in law
    assert outcome.data.verdict.word == "BREACHED"
    quality = section(page, "data-quality")
    assert "Figures in doubt" in quality
    assert "staff station first-aid offline" in quality


def test_brief_gaps_and_staff_beside_attendance_are_on_the_record(tmp_path: Path) -> None:
    permit = write_permit(tmp_path, pending_s=10, clear_s=0)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.badge(0, "DR-1", "doctor")
    for k in range(2):
        log.badge(0, f"RN-{k}", "nurse")
    for k in range(40):
        log.badge(1, f"S-{k}", "security")
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.gate("north", 10 * MIN, 490)  # 490 counted, 43 badged staff: 533 with them
    log.gate("north", 20 * MIN, 900)  # 900 counted
    log.badge(30 * MIN, "DR-1", "doctor", "off")  # no doctor for five seconds
    log.badge(30 * MIN + 5, "DR-2", "doctor")
    log.close(40 * MIN)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    assert [f.rule for f in outcome.data.findings if f.severity == "breach"] == []
    (gap,) = outcome.data.brief_gaps
    assert gap.rule == "doctor-on-duty"
    assert gap.until is not None
    assert gap.until - gap.since == 5_000_000
    (beside,) = outcome.data.collector.staff_beside.stretches
    assert (beside.limit, beside.attendance, beside.staff) == (500, 490, 43)
    assert (beside.start, beside.end) == (utc(2027, 7, 4, 14, 10), utc(2027, 7, 4, 14, 20))
    findings = section((out / "index.html").read_text(encoding="utf-8"), "findings")
    assert "Brief gaps in doctors and nurses" in findings
    assert "Doctor on duty (doctor-on-duty)" in findings
    assert "Staff beside attendance" in findings
    assert "staff who enter elsewhere (badged doctors, nurses and guards) are not counted" in (
        findings
    )


def test_an_assembly_over_several_properties_has_a_timeline_column_each(tmp_path: Path) -> None:
    permit = write_permit(tmp_path)
    text = permit.read_text()
    text = re.sub(r"^\[property\][^\n]*\n", '[[properties]]\nid = "main-field"\n', text, flags=re.M)
    text = text.replace(
        "[[windows]]",
        '[[properties]]\nid = "overflow"\nowner = "J. Lee"\naddress = "410 Route 52, Kent NY"\n'
        "\n[[windows]]",
        1,
    )
    text = re.sub(r'(\[\[gates\]\]\nid = "[^"]+")', r'\1\nproperty = "main-field"', text)
    text = text.replace(
        'id = "south"\nproperty = "main-field"', 'id = "south"\nproperty = "overflow"'
    )
    text = re.sub(r'(\[\[lots\]\]\nid = "[^"]+")', r'\1\nproperty = "main-field"', text)
    text = text.replace(
        '[[staff_stations]]\nid = "first-aid"',
        '[[staff_stations]]\nid = "first-aid"\nproperty = "main-field"',
    )
    permit.write_text(text)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.badge(0, "DR-1", "doctor")
    for k in range(10):
        log.badge(0, f"RN-{k}", "nurse")
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.gate("north", 60, 3900)
    log.gate("south", 70, 300)  # 4,200: over the 4,000 the permit allows
    log.gate("south", 200, 300, 250)
    log.close(10 * MIN)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    (over,) = [f for f in outcome.data.findings if f.rule == "max-at-one-time"]
    assert over.worst_observed["properties"] == {"main-field": 3900, "overflow": 300}
    timeline = rows(out / "timeline.csv")
    assert list(timeline[0])[-3:] == ["uncertain", "attendance_main-field", "attendance_overflow"]
    minute = {r["minute"][11:16]: r for r in timeline}
    assert (minute["10:01"]["attendance_main-field"], minute["10:01"]["attendance_overflow"]) == (
        "3900", "300",
    )  # fmt: skip
    assert minute["10:03"]["attendance_overflow"] == "300"  # the most in the minute
    assert minute["10:03"]["attendance_main-field"] == "3900"
