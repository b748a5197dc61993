"""The report claims no more than the law supports: a day that ends on time, watched
throughout, is NO BREACH FOUND and names nothing unwatched (no verdict says the terms were
kept), only permit:G's grounds are tied to revocation, rounding-only breaches stand apart
and prove nothing, and an assembly of 500 or fewer is reported as the chapter reads it
(docs/law.md)."""

from __future__ import annotations

import re
from pathlib import Path

from report_support import ScriptedLog, page_text, utc, write_permit

from kent_ops.core.checklist import applicable_items
from kent_ops.core.permit import load_permit
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


NOTHING_UNWATCHED = (
    "nothing: every checklist item that applies was marked by an inspector, every listed "
    "sensor was heard, and no time was indeterminate"
)


def ends_on_time(log: ScriptedLog, *, inspected: bool) -> None:
    """3,000 from 11:00, leaving from 23:30 with nobody admitted; every sensor heard every
    half hour; with ``inspected``, every checklist item marked ok (item F after the end)."""
    staffed(log)
    for sensor in ("north", "south"):
        log.gate(sensor, 0, 0)
    for lot in ("lot-a", "lot-b"):
        log.lot(lot, 0, 0)
    for at in range(1800, END, 1800):  # the counters and lot sensors keep reporting
        log.gate("north", at, 3000 if at >= 3600 else 0)  # 11:00: 3,000 present
        log.gate("south", at, 0)
        log.lot("lot-a", at, 300)
        log.lot("lot-b", at, 200)
    if inspected:
        items = [i.item for i in applicable_items(log.permit) if i.item != "F"]
        for k, item in enumerate(items):
            log.inspector("insp-1", "inspection", 7200 + 60 * k, item=item, result="ok")
    log.gate("north", END - 1, 3000)
    out_total = 0
    for minute in range(31):  # from 23:30, 100 leave a minute, nobody enters
        out_total = min(out_total + 100, 3000)
        log.gate("north", END + minute * MIN, 3000, out_total)
        if minute % 10 == 0:
            log.gate("south", END + minute * MIN, 0)
            log.lot("lot-a", END + minute * MIN, 100)
            log.lot("lot-b", END + minute * MIN, 50)
    if inspected:  # 00:10, after the crowd went home at 23:55: clean-up recorded in time
        log.inspector("insp-2", "inspection", END + 40 * MIN, item="F", result="ok")
    log.close(END + 40 * MIN + 1)


def test_a_day_that_ends_on_time_with_every_duty_met_and_every_item_marked_names_nothing_unwatched(
    tmp_path: Path,
) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    ends_on_time(log, inspected=True)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    data = outcome.data
    assert [f.rule for f in data.findings if f.severity != "data"] == ["dispersing"]
    assert data.incomplete == []
    assert data.clean_up.status == "done"
    assert data.verdict.line == (
        "NO BREACH FOUND: no breach was proven in the time the evidence log covers; not "
        f"watched: {NOTHING_UNWATCHED}"
    )
    assert outcome.exit_code == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    verdict = section(page, "verdict")
    assert verdict.strip().startswith(f"NO BREACH FOUND Not watched: N{NOTHING_UNWATCHED[1:]}.")
    for claim in ("KEPT", "terms were kept", "terms were met", "complied", "compliant"):
        assert claim not in page_text(page), claim
    assert "(permit-required)" not in section(page, "findings")
    law = section(page, "the-law")
    assert "No finding is a ground for revocation" in law
    assert (
        "any person who caused the gathering of more than 500 persons without first obtaining "
        "a written permit (penalties:A)" in law
    )


def test_no_breach_found_names_the_items_no_inspector_marked_and_the_sensors_never_heard(
    tmp_path: Path,
) -> None:
    permit = write_permit(tmp_path)
    text = permit.read_text().replace('[[staff_stations]]\nid = "first-aid"\n', (
        '[[staff_stations]]\nid = "first-aid"\n\n[[staff_stations]]\nid = "gate-desk"\n'
    ))  # fmt: skip
    assert "gate-desk" in text
    permit.write_text(text)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    ends_on_time(log, inspected=False)
    log_permit = load_permit(permit)
    assert "C(7)" not in [i.item for i in applicable_items(log_permit)]
    outcome = build_report(permit, evidence, tmp_path / "report")
    assert outcome.data.clean_up.status == "open"  # the log ends before the deadline
    assert outcome.data.verdict.line == (
        "NO BREACH FOUND: no breach was proven in the time the evidence log covers; clean-up "
        "is not yet due; not watched: checklist items no inspector marked: C(1)(a), C(1)(b), "
        "C(1)(c), C(1)(d), C(1)(e), C(1)(f), C(1)(g), C(1)(h), C(1)(i), C(1)(j), C(2)(a), "
        "C(2)(b), C(2)(c), C(3), C(5), C(6), C(8), C(9), D, F; sensors never heard: gate-desk"
    )
    assert outcome.exit_code == 0


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
    # Rounding up is kent-ops' reading, not the law's words: it proves no breach (and the
    # log ends at 10:21, before the window's end: the record is incomplete).
    assert outcome.data.verdict.word == "RECORD INCOMPLETE"
    assert outcome.data.verdict.reason == (
        "no breach was proven, but the record is incomplete: the evidence log ends before the "
        "last permitted window ended; 1 breach finding not proven (only within the rounding: "
        "Registered nurses per persons present (nurse-ratio)), listed apart; clean-up is "
        "still open"
    )


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
    assert data.verdict.word == "BREACHED"
    assert data.verdict.reason.startswith(
        "1 breach finding proven during the assembly: Assembly without a permit (permit-required)"
    )
    assert data.unwatched.items == ()  # no duty binds 500 or fewer: nothing to inspect for
    page = page_text((out / "index.html").read_text(encoding="utf-8"))
    assert "no permit is needed for at most 400 persons at one time" in page
