"""The permit beyond its terms, as the report states it: each property with its owner and
the persons on it, the permit's status over time, every pre-event check, and texts from
the wire without their control characters."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from report_support import EVENT, ROOT, TOPICS, ScriptedLog, page_text, utc, write_permit
from wire_support import clerk_permit

from kent_ops.core.precheck import CHECKS
from kent_ops.report.build import build_report
from kent_ops.report.facts import CHECK_WORDS
from kent_ops.report.findings import plural

T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT


def section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match, anchor
    return page_text(match[1])


def two_property_permit(tmp: Path) -> Path:
    """The example permit over three properties, under the scripted event's id."""
    text = (ROOT / "examples" / "permit-two-properties.toml").read_text()
    text = text.replace('id = "kent-harvest-weekend-2027"', f'id = "{EVENT}"')
    text += "\n[alerting]\npending_s = 10\nclear_s = 30\nstale_after_s = 3600\n"
    path = tmp / "permit-properties.toml"
    path.write_text(text)
    return path


def test_each_property_with_its_owner_and_the_persons_on_it(tmp_path: Path) -> None:
    permit = two_property_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, utc(2027, 8, 14, 16, 0))  # 12:00 EDT
    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    log.gate("north", 60, 300)  # main-field 300
    log.gate("meadow-road", 120, 100)  # camping-meadow 100
    log.gate("field-to-meadow", 180, 50)  # main-field 250, camping-meadow 150
    log.gate("north", 240, 300, 100)  # main-field 150
    log.gate("south", 300, 0)
    log.close(301)
    outcome = build_report(permit, evidence, tmp_path / "report")
    got = {p.id: (p.highest, p.at_end) for p in outcome.data.properties}
    assert got == {
        "main-field": (300, 150),
        "overflow-parking": (0, 0),
        "camping-meadow": (150, 150),
    }
    main = outcome.data.properties[0]
    assert main.highest_at == utc(2027, 8, 14, 16, 1)
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    permit_text = section(page, "permit")
    assert (
        "camping-meadow owner Kent Grange Association tenant or lessee Lakeside Camping Co. "
        "30 Farmers Mills Rd, Kent NY yes; tenant: yes 150 at 2027-08-14 12:03:00 150"
    ) in permit_text
    assert (
        "main-field owner R. Smith 400 Route 52, Kent NY yes 300 at 2027-08-14 12:01:00 150"
    ) in permit_text
    law = section(page, "the-law")
    for who in (
        "the applicant, Hudson Valley Events LLC;",
        "R. Smith, owner of main-field (400 Route 52, Kent NY);",
        "T. Alvarez, owner of overflow-parking (412 Route 52, Kent NY);",
        "Kent Grange Association, owner of camping-meadow (30 Farmers Mills Rd, Kent NY);",
        "Lakeside Camping Co., tenant or lessee of camping-meadow;",
    ):
        assert who in law, who


def clerk(log: ScriptedLog, seconds: float, status: str, resolution: str, reason: str) -> None:
    at = log.at(seconds)
    log.send(
        TOPICS.clerk_permit("clerk-1"), clerk_permit(at, status, at, resolution, reason), seconds
    )


def test_the_permits_status_over_time_and_control_characters_stripped(tmp_path: Path) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.badge(0, "DR-1", "doctor")
    for k in range(1, 5):
        log.badge(0, f"RN-{k}", "nurse")
    log.gate("north", 0, 0)
    log.gate("south", 0, 0)
    log.gate("north", 600, 900)  # 10:10: 900 persons
    clerk(log, 1800, "revoked", "TB-2027-41\x1b[31m", "no doctor on site\x07 since 10:20")
    log.inspector("insp-1", "note", 1900, text="\x1b[2Jwater \x1b]0;owned\x07station dry\x9b")
    log.inspector("insp-1", "ack", 1950, alert="A-0001", comment="called\x1b[0m the Clerk\r\n")
    log.inspector("insp-2", "adjust", 2000, attendance=880, reason="sweep\x08 count\x00")
    # hand-made: refused for its unlisted gate and its missing field, the report quotes it
    west = json.dumps({"seq": 1, "ts": log.ts(2050), "in_total": 1}).encode()
    log.send(TOPICS.gate_count("west\x1b"), west, 2050)
    clerk(log, 3600, "issued", "TB-2027-42", "doctor back on site")
    log.gate("north", 3660, 900, 20)
    log.close(3661)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    history = outcome.data.permit_history
    assert [(e.word, e.resolution) for e in history] == [
        ("issued", ""),
        ("revoked", "TB-2027-41[31m"),
        ("reinstated", "TB-2027-42"),
    ]
    assert history[1].at == utc(2027, 7, 4, 14, 30)
    assert history[2].at == utc(2027, 7, 4, 15, 0)
    page = (out / "index.html").read_text(encoding="utf-8")
    text = section(page, "permit")
    assert (
        "2027-07-04 10:30:00 revoked TB-2027-41[31m clerk-1 no doctor on site since 10:20"
    ) in text
    assert "2027-07-04 11:00:00 reinstated TB-2027-42 clerk-1 doctor back on site" in text
    # 900 present when the revocation took effect, nobody admitted, reinstated within the
    # hour allowed to disperse: a warning, never an assembly without a permit.
    assert not [f for f in outcome.data.findings if f.rule == "permit-required"]
    (leaving,) = [f for f in outcome.data.findings if f.rule == "dispersing"]
    assert (leaving.start, leaving.end) == (utc(2027, 7, 4, 14, 30), utc(2027, 7, 4, 15, 0))
    # What came off the wire reaches the page and the CSVs without a control character.
    controls = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
    for name in ("index.html", "findings.csv", "timeline.csv"):
        assert not controls.search((out / name).read_text(encoding="utf-8")), name
    assert "[2Jwater ]0;ownedstation dry" in page
    assert "sweep count" in page
    assert "called[0m the Clerk" in page
    assert TOPICS.gate_count("west") in page


def test_pre_event_breaches_count_and_every_check_is_listed(tmp_path: Path) -> None:
    clean_permit = write_permit(tmp_path)
    short = tmp_path / "short-bond.toml"  # the bond is no condition of issuing: a breach
    short.write_text(re.sub(r"(?m)^amount = 10000$", "amount = 9999", clean_permit.read_text()))
    assert short.read_text() != clean_permit.read_text()
    # The log ends at 10:01, long before the window closes: with no breach, the record is
    # incomplete; the short bond is a breach the permit file itself shows.
    for permit, word in ((clean_permit, "RECORD INCOMPLETE"), (short, "BREACHED")):
        evidence = tmp_path / f"{word}.sqlite"
        log = ScriptedLog(evidence, permit, T0)
        log.badge(0, "DR-1", "doctor")
        log.badge(0, "RN-1", "nurse")
        log.gate("north", 0, 0)
        log.gate("south", 0, 0)
        log.gate("north", 60, 100)
        log.close(61)
        out = tmp_path / f"report-{word}"
        outcome = build_report(permit, evidence, out)
        assert outcome.data.verdict.word == word
        assert outcome.exit_code == 1
        page = (out / "index.html").read_text(encoding="utf-8")
        text = section(page, "permit")
        for check in CHECKS:
            assert check.__name__.replace("_", "-") in text
        found_nothing = "none of them found anything in the permit file"
        if word == "RECORD INCOMPLETE":
            assert "All 17 checks below ran clean" in text
            assert found_nothing in text
            assert "meets every" not in text  # the checks found nothing; they prove nothing
        else:
            assert found_nothing not in page_text(page)
            said = "1 pre-event breach in the permit file (bond-posted)"
            assert said in outcome.data.verdict.line
            assert said in page_text(page)
            assert "the Town Board fixed $10,000" in text


def test_every_pre_event_check_has_its_cite_and_plain_words() -> None:
    assert {c.__name__.replace("_", "-") for c in CHECKS} == set(CHECK_WORDS)


def test_the_verdict_counts_its_breaches_in_plain_english() -> None:
    assert plural(1, "pre-event breach") == "1 pre-event breach"
    assert plural(2, "pre-event breach") == "2 pre-event breaches"
    assert plural(3, "breach finding") == "3 breach findings"


def test_each_time_says_its_clock_and_an_action_shows_when_it_was_made_and_recorded(
    tmp_path: Path,
) -> None:
    """A rehearsal on the sensor clock, run on 1 December 2026 (the wall clock), as the
    demo is: the receive times are another year and another offset, and an inspector's
    note stamped 10:00:30 is recorded at 10:01:30, the engine's time then."""
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    shift = datetime(2026, 12, 1, 22, 12, 12, tzinfo=UTC) - T0
    log = ScriptedLog(evidence, permit, T0, received_shift=shift)
    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    log.gate("north", 0, 0)
    log.gate("north", 90, 200)
    log.inspector("insp-1", "note", 30, text="gate staff briefed")
    log.inspector("insp-1", "inspection", 30, item="C(3)", result="ok")
    log.inspector("insp-1", "adjust", 30, attendance=210, reason="sweep count")
    log.close(120)
    out = tmp_path / "report"
    build_report(permit, evidence, out)
    page = page_text((out / "index.html").read_text(encoding="utf-8"))
    evidence_part = page.split("9. The evidence log", 1)[1]
    # The log's first record is written when the file is opened, on this machine's clock.
    assert re.search(
        r"First record received \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC−0[45]:00 \(the "
        r"aggregator's receive clock\)",
        evidence_part,
    )
    assert (
        "Last record received 2026-12-01 17:14:12 UTC−05:00 (the aggregator's receive clock)"
        in evidence_part
    )
    assert (
        "Log ends 2027-07-04 10:01:30 UTC−04:00 (the engine's clock: the sensors' own "
        "timestamps)" in evidence_part
    )
    made = "2027-07-04 10:00:30 (recorded 10:01:30)"
    assert f"{made} insp-1 — gate staff briefed" in page  # the notes table
    assert f"{made} insp-1: ok" in page  # the checklist's marks
    assert f"{made} insp-1 210 +10 sweep count" in page  # the adjustments
