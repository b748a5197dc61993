"""The verdict at each of its edges, word for word: BREACHED only on a proven breach, NO
BREACH FOUND or RECORD INCOMPLETE otherwise, each followed by what was not watched, and
never a word that the permit's terms were kept (docs/law.md, "What a finding may claim")."""

from __future__ import annotations

import dataclasses
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from core.core_support import DELETE, NY, permit_variant

from kent_ops.core.precheck import pre_event_findings
from kent_ops.report.cleanup import CleanUp, clean_up_status
from kent_ops.report.collect import InspectionMark
from kent_ops.report.findings import Finding, verdict
from kent_ops.report.watched import (
    SPANS_SPELLED,
    IndeterminateSpan,
    Unwatched,
    indeterminate_spans,
    unwatched,
)

END = datetime(2027, 7, 4, 23, 0, tzinfo=NY)
"""When the assembly was last on; the clean-up deadline is the end of 9 July."""
AFTER_DEADLINE = datetime(2027, 7, 12, tzinfo=NY)
PROVEN = "no breach was proven in the time the evidence log covers"


def clean_up(*marks: InspectionMark, log_end: datetime = AFTER_DEADLINE) -> CleanUp:
    permit = permit_variant()
    return clean_up_status(
        NY, END, still_on=False, scheduled_end=permit.last_end, inspections=list(marks),
        notes=[], log_end=log_end,
    )  # fmt: skip


def f_mark(day: int, result: str) -> InspectionMark:
    return InspectionMark("insp-2", datetime(2027, 7, day, 10, 0, tzinfo=NY), "F", result, "x", 9)


def finding(
    rule: str = "nurse-ratio",
    *,
    uncertain: bool = False,
    rounding: bool = False,
    fid: str = "A-0004",
) -> Finding:
    start = datetime(2027, 7, 4, 11, 0, tzinfo=NY)
    return Finding(
        id=fid, rule=rule, subject=None, cite="permit:C(9)", severity="breach",
        state="cleared", start=start, end=start + timedelta(hours=1), duration_s=3600.0,
        worst_observed={"attendance": 1001, "nurses_on_duty": 2, "within_rounding": rounding},
        required={"nurses": 3}, uncertain=uncertain, acknowledged=[], notes=[], message="",
        evidence_record=None, evidence_hash=None,
    )  # fmt: skip


def said(
    findings: list[Finding] | None = None,
    changes: dict[str, Any] | None = None,
    cu: CleanUp | None = None,
    incomplete: tuple[str, ...] = (),
) -> tuple[str, int]:
    """The verdict's line and exit code, with what was not watched as the report finds it
    (every item marked but F when clean-up has no mark, every sensor heard)."""
    permit = permit_variant(changes)
    cu = cu if cu is not None else clean_up(f_mark(6, "ok"))
    found = findings or []
    marks = [InspectionMark("insp-1", END, i, "ok", "", 1) for i in ("C(1)(a)",)]
    seen = unwatched(permit, marks, cu, dict.fromkeys(permit.sensors, END), found)
    items = tuple(i for i in seen.items if i in ("F",))  # the others are marked in these days
    seen = Unwatched(items, seen.sensors, seen.spans)
    v = verdict(
        found, cu, pre_event_findings(permit), messages=100, incomplete=incomplete,
        not_watched=seen.words(NY),
    )  # fmt: skip
    return v.line, v.exit_code


NOTHING = (
    "nothing: every checklist item that applies was marked by an inspector, every listed "
    "sensor was heard, and no time was indeterminate"
)


def test_a_permit_issued_on_a_59_day_filing_is_no_breach_by_the_applicant() -> None:
    filed = {"permit.application_filed_on": date(2027, 5, 6), "fee.paid_on": date(2027, 5, 6)}
    assert said(changes=filed) == (f"NO BREACH FOUND: {PROVEN}; not watched: {NOTHING}", 0)


def test_a_pending_permit_on_a_59_day_filing_is_the_applicants_pre_event_breach() -> None:
    pending = {
        "permit.status": "pending",
        "permit.application_filed_on": date(2027, 5, 6),
        "fee.paid_on": date(2027, 5, 6),
        "permit.decided_on": DELETE,
    }
    assert said(changes=pending) == (
        "BREACHED: 1 pre-event breach in the permit file (application-lead-time)",
        1,
    )


def test_planning_without_a_permit_is_no_breach() -> None:
    assert said(changes={"permit.status": "none"})[0].startswith("NO BREACH FOUND: ")


@pytest.mark.parametrize(
    ("marks", "words", "code"),
    [
        ((), f"NO BREACH FOUND: {PROVEN}; clean-up not recorded by its deadline (a warning: "
             "the Town holds no record); not watched: checklist items no inspector marked: F", 0),
        ((f_mark(6, "ok"),), f"NO BREACH FOUND: {PROVEN}; not watched: {NOTHING}", 0),
        ((f_mark(6, "deficient"),), "BREACHED: clean-up not done (permit:F): item F found "
                                    "deficient and not made good", 1),
        ((f_mark(6, "deficient"), f_mark(8, "ok")), f"NO BREACH FOUND: {PROVEN}; not watched: "
                                                   f"{NOTHING}", 0),
    ],
    ids=["none", "ok", "deficient-never-ok", "deficient-then-ok"],
)  # fmt: skip
def test_clean_up_in_the_verdict(marks: tuple[InspectionMark, ...], words: str, code: int) -> None:
    assert said(cu=clean_up(*marks)) == (words, code)


def test_clean_up_not_yet_due_says_so() -> None:
    cu = clean_up(log_end=datetime(2027, 7, 5, tzinfo=NY))
    assert said(cu=cu) == (
        f"NO BREACH FOUND: {PROVEN}; clean-up is not yet due; not watched: checklist items no "
        "inspector marked: F",
        0,
    )


def test_an_indeterminate_breach_is_time_not_watched_never_a_breach() -> None:
    unsure = finding(uncertain=True)
    assert [(s.rule, s.start, s.end) for s in indeterminate_spans([unsure])] == [
        ("nurse-ratio", unsure.start, unsure.end)
    ]
    assert said([unsure]) == (
        f"NO BREACH FOUND: {PROVEN}; 1 breach finding not proven (indeterminate: Registered "
        "nurses per persons present (nurse-ratio)), listed apart; not watched: time "
        "indeterminate: 2027-07-04 11:00:00 to 12:00:00 (Registered nurses per persons "
        "present, nurse-ratio, A-0004)",
        0,
    )


def test_a_breach_only_within_the_rounding_proves_nothing() -> None:
    line, code = said([finding(rounding=True)])
    assert line == (
        f"NO BREACH FOUND: {PROVEN}; 1 breach finding not proven (only within the rounding: "
        f"Registered nurses per persons present (nurse-ratio)), listed apart; not watched: "
        f"{NOTHING}"
    )
    assert code == 0


def test_a_proven_breach_is_breached_and_names_the_rest_apart() -> None:
    assert said([finding(fid="A-0003"), finding(uncertain=True)]) == (
        "BREACHED: 1 breach finding proven during the assembly: Registered nurses per persons "
        "present (nurse-ratio); 1 breach finding not proven (indeterminate: Registered nurses "
        "per persons present (nurse-ratio)), listed apart",
        1,
    )


def test_a_record_that_may_not_show_the_whole_assembly_is_incomplete() -> None:
    assert said(incomplete=("the evidence log ends before the last permitted window ended",)) == (
        "RECORD INCOMPLETE: no breach was proven, but the record is incomplete: the evidence "
        f"log ends before the last permitted window ended; not watched: {NOTHING}",
        1,
    )


def test_no_verdict_says_the_terms_were_kept() -> None:
    for line, _ in (said(), said([finding(uncertain=True)]), said(incomplete=("x",))):
        assert "kept" not in line.lower()
        assert "KEPT" not in line


def test_many_stretches_of_doubt_are_summed_up_in_the_verdict_not_spelled_out() -> None:
    """A night of flapping sensors must not make the verdict a page long: past a few
    stretches it says how many, between when and why, and where the report lists them."""
    start = datetime(2027, 7, 4, 10, 0, tzinfo=NY)

    def spans(n: int) -> tuple[IndeterminateSpan, ...]:
        return tuple(
            IndeterminateSpan(
                "attendance",
                "",
                start + timedelta(minutes=2 * i),
                start + timedelta(minutes=2 * i + 1),
                "gate north silent" if i % 2 else "attendance clamped at 0",
            )
            for i in range(n)
        )

    few = Unwatched((), (), spans(SPANS_SPELLED)).words(NY)
    assert few.count(" to ") == SPANS_SPELLED
    assert "2027-07-04 10:08:00 to 10:09:00 (attendance: attendance clamped at 0)" in few
    many = Unwatched((), (), spans(40)).words(NY)
    assert many == (
        "time indeterminate: 40 stretches, the first from 2027-07-04 10:00:00, the last "
        "ending at 2027-07-04 11:19:00 (attendance: attendance clamped at 0; attendance: gate "
        "north silent), each listed in the report (its findings and \u201cFigures in "
        "doubt\u201d)"
    )
    still = (*spans(6)[:-1], dataclasses.replace(spans(6)[-1], end=None))
    assert "the last still so when the log ends" in Unwatched((), (), still).words(NY)
