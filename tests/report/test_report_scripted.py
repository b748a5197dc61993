"""A scripted event with known breaches: the report states exactly them, to the second.

The event (sensor clock; T0 = 10:00 in Kent, the window's opening) is written with the
real EvidenceLog by a live engine, as the aggregator writes it; the report is then run
in-process and through ``python -m kent_ops report``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from report_support import ROOT, TOPICS, ScriptedLog, figures_of, page_text, utc, write_permit
from wire_support import gate_count

from kent_ops.report.build import FILES, FINDINGS_COLUMNS, ReportOutcome, build_report
from kent_ops.report.timeline import COLUMNS

T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT


def script_event(log: ScriptedLog) -> None:
    """The scripted day; the comments give each finding it must produce."""
    log.badge(0, "DR-1", "doctor")
    for i in range(1, 5):
        log.badge(0, f"RN-{i}", "nurse")
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.send(TOPICS.gate_count("west"), gate_count(1, log.at(50), 1), 50)
    log.send(TOPICS.gate_count("north"), b"{not json", 55)
    log.gate("north", 60, 1000)
    # 10:02:00 attendance 2,200 needs 5 nurses, 4 on duty: A-0001 nurse-ratio until 10:10.
    log.gate("south", 120, 1200)
    log.gate("north", 180, 1000)
    # 10:05:00 lot-a at 580 of 600 (97%): A-0002 lot-full (warning) until 10:06:40.
    log.lot("lot-a", 300, 580)
    log.lot("lot-a", 400, 500)
    log.gate("north", 480, 1000)
    log.badge(600, "RN-5", "nurse")
    log.gate("north", 660, 1000)
    log.inspector("insp-1", "ack", 700, alert="A-0001", comment="called the organiser")
    log.inspector("insp-1", "note", 710, text="<b>no water</b> at the east field")
    log.inspector("insp-1", "ack", 720, alert="A-0099", comment="no such alert")
    # 10:15:00 attendance 4,200: over the 4,000 for 5 s only (no alert); nurses short
    # (need 9, then 8, have 5): A-0003 nurse-ratio until 10:20.
    log.gate("north", 900, 3000)
    log.gate("north", 905, 3000, 300)
    log.badge(1200, "RN-6", "nurse")
    log.badge(1200, "RN-7", "nurse")
    log.badge(1200, "RN-8", "nurse")
    log.gate("south", 1260, 1200)
    # 10:25:00 attendance 4,400: A-0004 max-at-one-time, A-0005 nurse-ratio (9 > 8),
    # A-0006 parking-ratio (1,100 > 1,050 spaces), all until 10:30.
    log.gate("north", 1500, 3500, 300)
    log.gate("south", 1560, 1200)
    log.gate("north", 1800, 3500, 800)
    # 10:33:20 the doctor leaves; another arrives at 10:35:00: A-0007 doctor-on-duty.
    log.badge(2000, "DR-1", "doctor", "off")
    log.badge(2100, "DR-2", "doctor")
    log.gate("north", 2200, 3500, 800)
    # 10:41:40 the south counter restarts: A-0008 counter-reset (data), totals kept.
    log.seqs["south"] = 0
    log.gate("south", 2500, 10)
    log.inspector("insp-2", "adjust", 2600, attendance=3800, reason="sweep count of the grounds")
    # 10:45:00 water station cup: A-0009 facility-deficient C(1)(h) until 10:50.
    log.inspector("insp-2", "inspection", 2700, item="C(1)(h)", result="deficient",
                  note="common cup at water station 2")  # fmt: skip
    log.inspector("insp-2", "inspection", 3000, item="C(1)(h)", result="ok")
    for k, at in enumerate(range(3060, 3601, 60)):
        log.gate("north", at, 3500, 800)
        if k % 3 == 0:
            log.checkpoint(at)
    log.close(3601)


EXPECTED = [
    # id, rule, cite, severity, start, end, duration_s, worst_observed, required
    ("A-0001", "nurse-ratio", "permit:C(9)", "breach", "10:02:00", "10:10:00", "480",
     {"attendance": 2200, "nurses_on_duty": 4, "within_rounding": "true"}, {"nurses": 5}),
    ("A-0002", "lot-full", "permit:C(6)", "warning", "10:05:00", "10:06:40", "100",
     {"capacity": 600, "occupied": 580, "share": 0.967}, {"share_below": 0.95}),
    ("A-0003", "nurse-ratio", "permit:C(9)", "breach", "10:15:00", "10:20:00", "300",
     {"attendance": 4200, "nurses_on_duty": 5}, {"nurses": 9}),
    ("A-0004", "max-at-one-time", "permit:A, permit:B(2)", "breach", "10:25:00", "10:30:00",
     "300", {"attendance": 4400}, {"attendance_at_most": 4000}),
    ("A-0005", "nurse-ratio", "permit:C(9)", "breach", "10:25:00", "10:30:00", "300",
     {"attendance": 4400, "nurses_on_duty": 8, "within_rounding": "true"}, {"nurses": 9}),
    ("A-0006", "parking-ratio", "permit:C(6)", "breach", "10:25:00", "10:30:00", "300",
     {"attendance": 4400, "spaces_provided": 1050}, {"spaces": 1100}),
    ("A-0007", "doctor-on-duty", "permit:C(9)", "breach", "10:33:20", "10:35:00", "100",
     {"attendance": 3900, "doctors_on_duty": 0}, {"doctors": 1}),
    ("A-0008", "counter-reset", "—", "data", "10:41:40", "10:41:40", "0",
     {"restarts": 1, "seq": 1}, {}),
    ("A-0009", "facility-deficient", "permit:C(1)(h), permit:G", "breach", "10:45:00",
     "10:50:00", "300", {"note": "common cup at water station 2", "result": "deficient"},
     {"result": "ok"}),
]  # fmt: skip


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, ScriptedLog]:
    tmp = tmp_path_factory.mktemp("scripted")
    permit = write_permit(tmp)
    evidence = tmp / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    script_event(log)
    return permit, evidence, log


@pytest.fixture(scope="module")
def report(
    event: tuple[Path, Path, ScriptedLog], tmp_path_factory: pytest.TempPathFactory
) -> tuple[ReportOutcome, Path]:
    permit, evidence, _ = event
    out = tmp_path_factory.mktemp("out") / "report"
    return build_report(permit, evidence, out), out


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_findings_are_exactly_the_scripted_breaches_to_the_second(
    report: tuple[ReportOutcome, Path],
) -> None:
    outcome, out = report
    with (out / "findings.csv").open(newline="", encoding="utf-8") as f:
        assert next(csv.reader(f)) == list(FINDINGS_COLUMNS)
    rows = read_csv(out / "findings.csv")
    got = [
        (
            r["id"], r["rule"], r["cite"], r["severity"], r["start"], r["end"], r["duration_s"],
            figures_of(r["worst_observed"]), figures_of(r["required"]),
        )
        for r in rows
    ]  # fmt: skip

    def texts(figures: dict[str, object]) -> dict[str, str]:
        return {k: str(v) for k, v in figures.items()}

    want = [
        (i, rule, cite, sev, f"2027-07-04T{s}-04:00", f"2027-07-04T{e}-04:00", d,
         texts(w), texts(req))
        for i, rule, cite, sev, s, e, d, w, req in EXPECTED
    ]  # fmt: skip
    assert got == want
    # The figures are plain text a spreadsheet reads, never JSON.
    assert not any("{" in r["worst_observed"] + r["required"] for r in rows)
    assert rows[0]["worst_observed"] == "attendance=2200; nurses_on_duty=4; within_rounding=true"
    assert rows[0]["name"] == "Registered nurses per persons present"
    assert rows[3]["name"] == "Attendance above the permitted maximum"
    assert all(r["uncertain"] == "false" for r in rows)
    assert rows[0]["acknowledged"] == (
        "by=insp-1; at=2027-07-04T10:11:40-04:00; comment=called the organiser"
    )
    assert all(r["acknowledged"] == "" for r in rows[1:])
    data = outcome.data
    assert data.verdict.word == "BREACHED"
    # Two nurse-ratio findings hold only by rounding up: named, never counted as proven.
    assert data.verdict.line == (
        "BREACHED: 5 breach findings proven during the assembly: Registered nurses per "
        "persons present (nurse-ratio), Attendance above the permitted maximum "
        "(max-at-one-time), Car spaces per persons present (parking-ratio), Doctor on duty "
        "(doctor-on-duty), Facility found deficient (facility-deficient); 2 breach findings "
        "not proven (only within the rounding: Registered nurses per persons present "
        "(nurse-ratio)), listed apart"
    )
    # The log ends at 11:00 with the assembly still on: clean-up has not begun.
    assert data.clean_up.status == "open"
    assert data.clean_up.still_on
    assert data.clean_up.deadline is None
    assert data.comparison.equal, data.comparison.problems
    assert outcome.exit_code == 1


def test_report_findings_equal_the_alerts_logged_live(
    event: tuple[Path, Path, ScriptedLog], report: tuple[ReportOutcome, Path]
) -> None:
    log = event[2]
    outcome = report[0]
    live = {
        aid: (a.id, a.rule, a.subject, a.since, a.ended_at, a.cleared_at)
        for aid, a in log.published.items()
    }
    replayed = {
        f.id: (
            f.id, f.rule, f.subject, f.start, f.end,
            outcome.data.replay.engine.alerts[f.id].cleared_at,
        )
        for f in outcome.data.findings
    }  # fmt: skip
    assert replayed == live
    # Each logged alert reads back as the very record the live engine published.
    assert outcome.data.collector.live_alerts == log.published


def test_timeline_has_a_row_a_minute_with_the_whole_minute_figures(
    report: tuple[ReportOutcome, Path],
) -> None:
    out = report[1]
    with (out / "timeline.csv").open(newline="", encoding="utf-8") as f:
        assert next(csv.reader(f)) == list(COLUMNS)
    rows = {r["minute"][11:16]: r for r in read_csv(out / "timeline.csv")}
    assert list(rows)[0] == "10:00"
    assert list(rows)[-1] == "11:00"
    assert len(rows) == 61
    assert all(r["minute"].endswith(":00-04:00") for r in rows.values())
    # 10:15: 4,200 for five seconds, then 3,900: the minute's highest is 4,200.
    assert rows["10:15"]["attendance_max"] == "4200"
    assert rows["10:16"]["attendance_max"] == "3900"
    assert rows["10:15"]["nurses_required"] == "9"
    # RN-5 came on exactly at 10:10:00: the minute never had only 4 nurses.
    assert rows["10:09"]["nurses_on_duty"] == "4"
    assert rows["10:10"]["nurses_on_duty"] == "5"
    # No doctor from 10:33:20 to 10:35:00.
    assert [rows[m]["doctors_on_duty"] for m in ("10:32", "10:33", "10:34", "10:35")] == [
        "1", "0", "0", "1",
    ]  # fmt: skip
    assert rows["10:25"]["spaces_required"] == "1100"
    assert rows["10:25"]["spaces_provided"] == "1050"
    assert rows["10:05"]["vehicles"] == "580"
    assert rows["10:06"]["vehicles"] == "580"  # 500 only from 10:06:40
    assert rows["10:07"]["vehicles"] == "500"
    assert rows["10:43"]["attendance_max"] == "3910"  # the restart's stitched totals
    assert rows["10:44"]["attendance_max"] == "3800"  # the inspector's sweep count
    assert rows["11:00"]["entries"] == "4710"


def test_every_manifest_hash_matches_its_file(
    event: tuple[Path, Path, ScriptedLog], report: tuple[ReportOutcome, Path]
) -> None:
    permit = event[0]
    outcome, out = report
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["files"]) == set(FILES)
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
    assert manifest["evidence"]["records"] == outcome.data.replay.records
    assert manifest["evidence"]["head_hash"] == outcome.data.replay.head_hash
    assert manifest["evidence"]["checkpoints"] == manifest["evidence"]["checkpoints_matched"] == 4
    assert manifest["permit"]["sha256"] == hashlib.sha256(permit.read_bytes()).hexdigest()
    assert manifest["version"] == __import__("kent_ops").__version__
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, "manifest.json"])


def test_the_page_escapes_what_came_from_the_log_and_embeds_its_charts(
    report: tuple[ReportOutcome, Path],
) -> None:
    out = report[1]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<b>no water</b>" not in page
    assert "&lt;b&gt;no water&lt;/b&gt; at the east field" in page
    assert page.count("data:image/png;base64,") == 3
    assert "SPEC" not in page  # the page cites the law, never a contract's section
    assert 'src="http' not in page
    assert "<link" not in page
    verdict_at = page.index('class="verdict breached"')
    assert verdict_at < page.index('id="permit"')  # the verdict comes first
    # No fine total anywhere: the law's range per violation, and nothing multiplied.
    assert "$700" not in page
    assert "$3,500" not in page
    assert "$100 to $500" in page
    assert "Minutes touched" not in page
    # Local times to the second, the zone stated once: no milliseconds, no offsets on lines.
    assert "All times are local time in America/New_York: EDT (UTC−04:00)." in page
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", page)
    assert not re.search(r"\d\d:\d\d(:\d\d)?[+-]\d\d:\d\d", page)
    text = page_text(page)
    # A-0001 and A-0005 hold only within the rounding: not proven.
    assert "Findings: 7 breach findings (of which 2 not proven), 1 warning, 1 data finding." in text
    assert (
        "Before the assembly: 0 breaches by the applicant or owner shown by the permit file "
        "(17 checks)." in text
    )
    assert "2027-07-04 10:02:00" in text
    # Plain rule names beside their ids.
    assert "Registered nurses per persons present (nurse-ratio)" in text
    # The log ends at 11:00, long before the window's 23:30 end.
    assert "The record is incomplete" in page
    for text in (
        "permit:C(9)",
        "common cup at water station 2",
        "sweep count of the grounds",
        "not valid JSON",
        "gate … is not listed in the permit",
        "acknowledgement for unknown alert …",
        "4 of 4 checkpoints",
        "8 min 00 s",
    ):
        assert text in page, text


@pytest.mark.slow  # the report command line: a fresh interpreter imports pandas
def test_the_command_line_writes_the_report_and_exits_1_for_breaches(
    event: tuple[Path, Path, ScriptedLog], tmp_path: Path
) -> None:
    permit, evidence, _ = event
    out = tmp_path / "cli-report"
    proc = subprocess.run(
        [sys.executable, "-m", "kent_ops", "report", "--permit", str(permit),
         "--evidence", str(evidence), "--out", str(out)],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("BREACHED: 5 breach findings proven ")
    counts = re.search(
        r"^(\d+) (findings?) \((\d+) (breach findings?), (\d+) proven\), clean-up",
        proc.stdout,
        re.M,
    )
    assert counts is not None, proc.stdout  # "9 findings (7 breach findings, 5 proven)"
    assert counts[2] == ("finding" if counts[1] == "1" else "findings")
    assert counts[4] == ("breach finding" if counts[3] == "1" else "breach findings")
    assert int(counts[1]) >= int(counts[3]) >= int(counts[5]) >= 1
    assert proc.stderr == ""  # not a terminal: no progress bar, and no warning
    assert (out / "index.html").is_file()


def test_the_page_words_what_a_figure_rests_on_and_counts_no_minutes(
    report: tuple[ReportOutcome, Path],
) -> None:
    page = (report[1] / "index.html").read_text(encoding="utf-8")
    text = page_text(page)
    # Durations, never a count of minutes a reader could take for a count of violations.
    assert "clock minutes" not in text.lower()
    assert "minutes in which" not in text.lower()
    assert "Rule Proven findings Time proven in breach Not proven (duration)" in text
    # Two of the three nurse findings hold only within the rounding: apart, not summed.
    assert "Registered nurses per persons present (nurse-ratio) 1 5 min 00 s 13 min 00 s" in text
    assert "Doctor on duty (doctor-on-duty) 1 1 min 40 s —" in text
    # Whose property, never who answers: that is for the prosecutor and the court.
    assert '<h3 id="properties">Properties and their owners</h3>' in page
    assert "who answers" not in text
    assert (
        "Which of the persons named answers for what is for the prosecutor and the court." in text
    )
    # Who is a person, and the one reason for the two attendance limits.
    assert (
        "Staff who enter elsewhere (crew, vendors, medical staff through a staff entrance) are "
        "not counted as persons, in attendance or against any limit." in text
    )
    assert (
        "Attendance above the permitted maximum (max-at-one-time) is a breach: more persons "
        "present than the application's expected maximum at one time (permit:B(2)), which is "
        "the assembly the permit authorised (permit:A: “… upon written permit authorizing "
        "such use and assembly …”). Entries above the expected total (max-collective) is a "
        "warning, not because that figure is an expectation (both figures are the "
        "application's expected maximums), but because gate entries count a person who "
        "leaves and comes back twice: entries are not persons." in text
    )


def test_only_a_proven_breach_is_tied_to_revocation_and_each_ground_says_whose_figure(
    report: tuple[ReportOutcome, Path],
) -> None:
    data = report[0].data
    assert [f.id for f in data.findings if f.revocation_ground] == [
        "A-0003", "A-0006", "A-0007", "A-0009",
    ]  # fmt: skip
    text = page_text((report[1] / "index.html").read_text(encoding="utf-8"))
    law = text.split("Grounds for revocation (permit:G)", 1)[1].split("Who the law reaches")[0]
    assert (
        "Not tied to any ground, because not proven: A-0001 (only within the rounding), "
        "A-0005 (only within the rounding)." in law
    )
    assert "A-0001 Registered" not in law
    assert (
        "A-0007 Doctor on duty (doctor-on-duty) permit:C(9) 2027-07-04 10:33:20 the facilities "
        "were not provided as specified in the application (the law requires them: "
        "permit:C(9))" in law
    )
    assert "and the law requires, found not provided" not in text
    findings = text.split("3. Findings", 1)[1]
    assert "breach not proven: only within the rounding" in findings
