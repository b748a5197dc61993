"""The lots against the gates in the report's data quality (docs/law.md, "When the lots
contradict the gates"): the ``cars-exceed-persons`` alert with its stretches, the
figures in doubt, and the stretches of a breach it made indeterminate."""

from __future__ import annotations

import re
from pathlib import Path

from report_support import ScriptedLog, page_text, utc, write_permit

from kent_ops.core.counting import CARS_EXCEED
from kent_ops.report.build import build_report

MIN = 60
T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT, the window opens
SENTENCE = (
    "980 cars are parked but the gates count 900 persons and 2 staff: a gate counter may "
    "be missing entries"
)


def section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match, anchor
    return page_text(match[1])


def day(tmp_path: Path, *, contradicted: bool) -> tuple[Path, Path]:
    """900 persons from 11:00 to 13:00 with two nurses and no doctor (a breach resting on
    attendance); the lots hold 500 cars meanwhile, or, if ``contradicted``, 980 from
    11:30 to 12:00."""
    permit = write_permit(tmp_path, pending_s=10, clear_s=0)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    for k in range(2):
        log.badge(0, f"RN-{k}", "nurse")
    for minute in range(181):  # every sensor reports every minute: none silent
        many = contradicted and 90 <= minute < 120
        log.gate("north", minute * MIN, 900 if minute >= 60 else 0)
        log.gate("south", minute * MIN, 0)
        crowd = minute >= 60
        log.lot("lot-a", minute * MIN, 560 if many else 300 if crowd else 0)
        log.lot("lot-b", minute * MIN, 420 if many else 200 if crowd else 0)
    log.close(181 * MIN)
    return permit, evidence


def test_the_cross_check_is_shown_with_its_stretches_and_what_it_made_indeterminate(
    tmp_path: Path,
) -> None:
    permit, evidence = day(tmp_path, contradicted=True)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    data = outcome.data
    (cross,) = [f for f in data.findings if f.rule == "cars-exceed-persons"]
    assert (cross.start, cross.end) == (utc(2027, 7, 4, 15, 30), utc(2027, 7, 4, 16, 0))
    assert cross.severity == "data"
    assert cross.worst_sentence == SENTENCE
    (doctor,) = [f for f in data.findings if f.rule == "doctor-on-duty"]
    assert [(x.basis, x.start, x.end, x.rests_on) for x in doctor.stretches] == [
        ("measured", utc(2027, 7, 4, 15, 0), utc(2027, 7, 4, 15, 30), ()),
        ("indeterminate", utc(2027, 7, 4, 15, 30), utc(2027, 7, 4, 16, 0), (CARS_EXCEED,)),
        ("measured", utc(2027, 7, 4, 16, 0), None, ()),  # no doctor came
    ]
    assert doctor.proven_s == 90 * MIN  # to the last reading, at 13:00
    assert data.verdict.word == "BREACHED"  # proven for its measured stretches
    assert data.comparison.equal, data.comparison.problems
    page = (out / "index.html").read_text(encoding="utf-8")
    quality = section(page, "data-quality")
    lots = quality.split("Lots against the gates", 1)[1].split("Rejected messages", 1)[0]
    assert cross.id in lots
    assert SENTENCE in lots
    assert "2027-07-04 11:30:00" in lots
    assert "2027-07-04 12:00:00" in lots
    assert "measured 11:30:00–12:00:00" in lots  # its own stretch: lots and staff reported
    assert f"{doctor.id} Doctor on duty (doctor-on-duty)" in lots
    assert "indeterminate, not proven" in lots
    doubt = quality.split("Figures in doubt", 1)[1]
    assert f"Attendance {CARS_EXCEED} 2027-07-04 11:30:00 2027-07-04 12:00:00" in doubt


def test_a_day_the_lots_never_contradict_says_so(tmp_path: Path) -> None:
    permit, evidence = day(tmp_path, contradicted=False)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    assert not [f for f in outcome.data.findings if f.rule == "cars-exceed-persons"]
    quality = section((out / "index.html").read_text(encoding="utf-8"), "data-quality")
    assert (
        "Lots against the gates At no time were more cars parked than persons counted plus "
        "staff on duty." in quality
    )
