"""What the law provides, as the report states it: no fine total, the distinct breaches by
rule and local day, indeterminate breaches apart, who the law reaches, and the law's own
words for every citation the page uses."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from report_support import ROOT, ScriptedLog, page_text, utc, write_permit

from kent_ops.report.build import ReportOutcome, build_report
from kent_ops.report.citations import EXCERPTS, cites_in

H = 3600
T0 = utc(2027, 7, 4, 22, 0)  # 18:00 EDT, the window's opening


def overnight_event(tmp: Path) -> tuple[Path, Path]:
    """18:00 to 02:00: three nurse shortages, the last across midnight; all gone by 01:00."""
    permit = write_permit(
        tmp,
        windows=[("2027-07-04T18:00:00-04:00", "2027-07-05T02:00:00-04:00")],
        overnight=True,
    )
    permit.write_text(
        permit.read_text().replace("housing_statement = false", "housing_statement = true")
    )
    evidence = tmp / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    counts = {"north": 0, "south": 0}

    def heartbeat(at: float) -> None:
        log.gate("north", at, counts["north"])
        log.gate("south", at, counts["south"])
        log.lot("lot-a", at, 10)
        log.lot("lot-b", at, 10)

    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    counts["north"] = 400
    heartbeat(0)
    counts["north"] = 1000
    heartbeat(H)  # 19:00: 1,000 persons need 2 nurses, 1 on duty (A-0001 until 19:10)
    log.badge(H + 600, "RN-2", "nurse")
    log.badge(H + 1800, "RN-2", "nurse", "off")  # 19:30 to 19:40 (A-0002)
    log.badge(H + 2400, "RN-3", "nurse")
    for k in range(2, 6):
        heartbeat(k * H)
    heartbeat(5 * H + 1800)
    counts["south"] = 500
    heartbeat(5 * H + 3000)  # 23:50: 1,500 need 3, 2 on duty, until 00:10 (A-0003)
    log.badge(6 * H + 600, "RN-4", "nurse")
    heartbeat(6 * H + 1800)
    log.gate("north", 7 * H, 1000, 1000)  # 01:00: everyone has left
    log.gate("south", 7 * H, 500, 500)
    log.inspector("insp-1", "inspection", 7 * H + 1800, item="F", result="ok")  # 01:30
    log.lot("lot-a", 8 * H + 1800, 0)
    log.lot("lot-b", 8 * H + 1800, 0)
    log.gate("north", 8 * H + 1800, 1000, 1000)
    log.gate("south", 8 * H + 1800, 500, 500)
    log.close(8 * H + 1801)
    return permit, evidence


@pytest.fixture(scope="module")
def overnight(tmp_path_factory: pytest.TempPathFactory) -> tuple[ReportOutcome, str]:
    tmp = tmp_path_factory.mktemp("overnight")
    permit, evidence = overnight_event(tmp)
    outcome = build_report(permit, evidence, tmp / "report")
    return outcome, (tmp / "report" / "index.html").read_text(encoding="utf-8")


def section(page: str, anchor: str) -> str:
    """The visible text of one ``<section id=…>`` of the page."""
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match, anchor
    return page_text(match[1])


def test_the_law_provides_what_it_says_and_no_fine_total(
    overnight: tuple[ReportOutcome, str],
) -> None:
    text = section(overnight[1], "the-law")
    assert "Each breach this report lists as proven is evidence of a possible violation" in text
    assert (
        "a breach listed as not proven (indeterminate, or only within the rounding) is not" in text
    )
    assert "A violation is a misdemeanour (penalties:A)." in text
    assert (
        "For each violation a court may impose a fine of $100 to $500, or imprisonment of "
        "up to one year, or both (penalties:B)."
    ) in text
    assert (
        "The Town Board may revoke the permit through its Clerk (permit:G) on its two grounds only"
    ) in text
    assert "seek an injunction to restrain the violation (penalties:C)" in text
    assert "for the prosecutor and the court" in text
    assert "This is not a count of offences" in text
    # Three breach findings: nothing anywhere multiplies them by a fine.
    page = page_text(overnight[1])
    assert not re.search(r"\$\d[\d,]* to \$\d[\d,]* in fines", page)
    assert "$300" not in page
    assert "$1,500" not in page
    assert "exposure" not in page.lower()


def test_distinct_breaches_are_one_line_per_rule_and_local_day(
    overnight: tuple[ReportOutcome, str],
) -> None:
    outcome, page = overnight
    distinct = outcome.data.distinct
    # Two shortages on the afternoon of the 4th and one from 23:50 to 00:10: two lines.
    assert [(d.day.isoformat(), d.rule, d.findings) for d in distinct] == [
        ("2027-07-04", "nurse-ratio", ["A-0001", "A-0002", "A-0003"]),
        ("2027-07-05", "nurse-ratio", ["A-0003"]),
    ]
    text = section(page, "the-law")
    assert (
        "Sunday 4 July 2027 Registered nurses per persons present (nurse-ratio) permit:C(9) "
        "19:00:00 to 19:10:00 19:30:00 to 19:40:00 23:50:00 to midnight A-0001, A-0002, A-0003"
    ) in text
    assert (
        "Monday 5 July 2027 Registered nurses per persons present (nurse-ratio) permit:C(9) "
        "00:00:00 to 00:10:00 A-0003"
    ) in text


def test_who_the_law_reaches_is_the_applicant_and_the_owner(
    overnight: tuple[ReportOutcome, str],
) -> None:
    text = section(overnight[1], "the-law")
    assert "the applicant, and each property owner, tenant or lessee who let property" in text
    assert "the applicant, Hudson Valley Events LLC;" in text
    assert "R. Smith, owner of main (400 Route 52, Kent NY);" in text


def test_clean_up_runs_from_the_day_the_assembly_was_last_on(
    overnight: tuple[ReportOutcome, str],
) -> None:
    """Everyone left at 01:00 on the 5th, an hour before the window was to close at 02:00:
    the assembly ended then, on the 5th; the ok marked at 01:30 counts."""
    outcome, page = overnight
    cu = outcome.data.clean_up
    assert cu.assembly_end == utc(2027, 7, 5, 5, 0)
    assert cu.ended_on is not None
    assert cu.ended_on.isoformat() == "2027-07-05"
    assert cu.deadline is not None
    assert cu.deadline.isoformat() == "2027-07-11T00:00:00-04:00"
    assert cu.status == "done"
    assert cu.satisfied_by is not None
    assert cu.satisfied_by.at == utc(2027, 7, 5, 5, 30)
    text = section(page, "clean-up")
    assert "The assembly was last on at 2027-07-05 01:00:00" in text
    assert "by the end of Saturday 10 July 2027 (midnight)" in text


def test_a_complete_record_carries_no_incomplete_notice(
    overnight: tuple[ReportOutcome, str],
) -> None:
    outcome, page = overnight
    assert outcome.data.incomplete == []
    assert "RECORD INCOMPLETE" not in page
    assert "The record is incomplete" not in page


def test_an_uncertain_breach_is_indeterminate_and_kept_out_of_the_lists(tmp_path: Path) -> None:
    """South's counter falls silent; a nurse shortage then is not proof of a breach."""
    permit = write_permit(tmp_path, stale_after_s=60)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, utc(2027, 7, 4, 14, 0))
    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    log.gate("south", 0, 0)
    for k in range(10):
        log.gate("north", 20 * k, 0 if k < 6 else 600)  # from 10:02:00, 600 need 2 nurses
    log.close(181)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    data = outcome.data
    (nurse,) = [f for f in data.findings if f.rule == "nurse-ratio"]
    assert nurse.uncertain
    assert nurse.end is None
    assert data.distinct == []
    # No breach is proven and the log ends with it in progress: the record is incomplete,
    # and the nurse shortfall is time indeterminate, named as not watched.
    assert data.verdict.line == (
        "RECORD INCOMPLETE: no breach was proven, but the record is incomplete: the evidence "
        "log ends before the last permitted window ended; sensor lot-a was still offline or "
        "silent when the log ends; sensor lot-b was still offline or silent when the log "
        "ends; sensor south was still offline or silent when the log ends; breach A-0004 "
        "(Registered nurses per persons present) was still in progress when the log ends; 1 "
        "breach finding not proven "
        "(indeterminate: Registered nurses per persons present (nurse-ratio)), listed apart; "
        "clean-up is still open; not watched: checklist items no inspector marked: C(1)(a), "
        "C(1)(b), C(1)(c), C(1)(d), C(1)(e), C(1)(f), C(1)(g), C(1)(h), C(1)(i), C(1)(j), "
        "C(2)(a), C(2)(b), C(2)(c), C(3), C(5), C(6), C(8), C(9), D, F; sensors never heard: "
        "lot-a, lot-b; time indeterminate: 2027-07-04 10:02:00 to the log's end (Registered "
        "nurses per persons present, nurse-ratio, A-0004); 2027-07-04 10:02:00 to the log's "
        "end (attendance: gate south silent)"
    )
    assert outcome.exit_code == 1
    page = (out / "index.html").read_text(encoding="utf-8")
    law = section(page, "the-law")
    assert "No breach of a live rule was proven during the assembly." in law
    assert "Indeterminate" in law
    assert f"{nurse.id} Registered nurses per persons present (nurse-ratio)" in law
    # Still in progress when the log ends: the record is incomplete, and says why.
    verdict = section(page, "verdict")
    assert "RECORD INCOMPLETE" in verdict
    assert f"breach {nurse.id} (Registered nurses per persons present) was still" in verdict
    assert "sensor south was still offline or silent" in verdict
    with (out / "findings.csv").open(newline="", encoding="utf-8") as f:
        (row,) = [r for r in csv.DictReader(f) if r["id"] == nurse.id]
    assert row["uncertain"] == "true"
    assert row["end"] == ""
    assert row["start"] == "2027-07-04T10:02:00-04:00"
    assert data.log_end == utc(2027, 7, 4, 14, 3)  # the last message's time
    assert row["duration_s"] == "60"  # up to the log's end


def test_every_cite_on_the_page_is_explained_in_the_laws_words(
    overnight: tuple[ReportOutcome, str],
) -> None:
    page = overnight[1]
    body, legend = page.split('<section id="legend">', 1)
    used = cites_in(page_text(body))
    assert {"permit:C(9)", "permit:F", "permit:G", "penalties:A", "penalties:B"} <= set(used)
    for cite in used:
        assert f"id='law-{cite.replace(':', '-')}'" in legend, cite
    text = page_text(legend)
    assert (
        "permit:C(9) doctors and nurses “Adequate medical facilities, including a first-aid "
        "station. It must be shown that at least one doctor will be in attendance at all times"
    ) in text
    # Nothing for a reader names the project's contract or its sections.
    assert "SPEC" not in page
    assert not re.search(r"\bsection \d", page_text(page), flags=re.I)


def test_the_legend_quotes_the_law_as_docs_law_md_does() -> None:
    """Every excerpt is the chapter's own words, as docs/law.md quotes them."""
    doc = (ROOT / "docs" / "law.md").read_text(encoding="utf-8")
    doc = re.sub(r"\s+", " ", re.sub(r"^> ?", "", doc, flags=re.M))
    for excerpt in EXCERPTS.values():
        for piece in excerpt.words.strip("… ").split(" … "):
            assert re.sub(r"\s+", " ", piece) in doc, (excerpt.cite, piece)


@pytest.mark.parametrize(
    ("text", "cites"),
    [
        ("permit:C(1)(h), permit:G", ["permit:C", "permit:C(1)", "permit:C(1)(h)", "permit:G"]),
        ("(permit:C(1)-(5))", ["permit:C", "permit:C(1)", "permit:C(2)", "permit:C(3)",
                               "permit:C(5)"]),
        ("penalties:B", ["penalties:B"]),
        ("the fee paid", ["fee"]),
    ],
)  # fmt: skip
def test_cites_are_found_with_their_paragraphs_and_ranges(text: str, cites: list[str]) -> None:
    assert cites_in(text) == cites
