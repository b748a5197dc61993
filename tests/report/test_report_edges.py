"""The report at its edges: daylight saving, tampering, an empty log, bad input, clean-up."""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from cli_support import Ran, kent_ops
from report_support import ScriptedLog, sha256_file, utc, write_permit

from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import ChainBroken, EvidenceLog, read_records, record_hash, verify
from kent_ops.report.build import FILES, build_report
from kent_ops.report.cleanup import CleanUp, clean_up_status
from kent_ops.report.collect import InspectionMark, InspectorNote
from kent_ops.report.page.fmt import Fmt

T0 = utc(2027, 7, 4, 14, 0)  # 10:00 EDT


def run_report(capsys: pytest.CaptureFixture[str], permit: Path, evidence: Path, out: Path) -> Ran:
    """``kent-ops report``, in this process (the entry point is proved in test_report_scripted)."""
    return kent_ops(
        capsys, "report", "--permit", str(permit), "--evidence", str(evidence), "--out", str(out)
    )


def small_event(tmp_path: Path) -> tuple[Path, Path]:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.badge(0, "DR-1", "doctor")
    for k in range(10):
        log.gate("north", 30 * k, 100 * k)
    log.close(301)
    return permit, evidence


# -- daylight saving ------------------------------------------------------------------------


def test_the_november_day_has_25_hours_in_the_timeline(tmp_path: Path) -> None:
    permit = write_permit(
        tmp_path,
        windows=[("2027-11-06T00:00:00-04:00", "2027-11-08T00:00:00-05:00")],
        overnight=True,
    )
    evidence = tmp_path / "evidence.sqlite"
    start = utc(2027, 11, 6, 4, 0)  # 2027-11-06 00:00 EDT
    log = ScriptedLog(evidence, permit, start)
    log.badge(0, "DR-1", "doctor")
    total = int((utc(2027, 11, 8, 5, 0) - start).total_seconds())  # to 11-08 00:00 EST
    for k, at in enumerate(range(0, total + 1, 300)):
        log.gate("north", at, 10 * k)
    log.close(total + 1)
    out = tmp_path / "report"
    build_report(permit, evidence, out)
    with (out / "timeline.csv").open(newline="", encoding="utf-8") as f:
        minutes = [row["minute"] for row in csv.DictReader(f)]
    days = Counter(m[:10] for m in minutes)
    assert days["2027-11-07"] == 25 * 60
    assert days["2027-11-06"] == 24 * 60
    assert minutes[0] == "2027-11-06T00:00:00-04:00"
    assert minutes[-1] == "2027-11-08T00:00:00-05:00"
    # The hour from 01:00 happens twice, once in EDT and once in EST.
    assert "2027-11-07T01:30:00-04:00" in minutes
    assert "2027-11-07T01:30:00-05:00" in minutes
    assert minutes.index("2027-11-07T01:59:00-04:00") + 1 == minutes.index(
        "2027-11-07T01:00:00-05:00"
    )


# -- tampering ------------------------------------------------------------------------------


def record_saying(evidence: Path, needle: bytes) -> int:
    """The id of the one record whose payload holds ``needle`` (so a test does not depend
    on how many alert records the engine wrote before it)."""
    conn = sqlite3.connect(evidence)
    rows = [
        i for i, payload in conn.execute("SELECT id, payload FROM records") if needle in payload
    ]
    conn.close()
    assert len(rows) == 1, rows
    return rows[0]


def tamper(evidence: Path, sql: str) -> None:
    """What someone with the file could do: drop the append-only triggers and edit it."""
    conn = sqlite3.connect(evidence)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute(sql)
    conn.commit()
    conn.close()


def test_a_tampered_log_is_refused_naming_the_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    permit, evidence = small_event(tmp_path)
    rid = record_saying(evidence, b'"in_total":400')
    # 400 in becomes 900 in, the payload staying bytes: only its content differs.
    tamper(
        evidence,
        "UPDATE records SET payload = CAST(replace(CAST(payload AS TEXT), "
        f"'\"in_total\":400', '\"in_total\":900') AS BLOB) WHERE id = {rid}",
    )
    conn = sqlite3.connect(evidence)
    (payload,) = conn.execute("SELECT payload FROM records WHERE id = ?", (rid,)).fetchone()
    conn.close()
    assert isinstance(payload, bytes)
    assert b'"in_total":900' in payload
    out = tmp_path / "report"
    proc = run_report(capsys, permit, evidence, out)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"record {rid}" in lines[0]
    assert "no report was written" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("parallel", [False, True])
def test_a_missing_record_is_refused_in_either_way_of_verifying(
    tmp_path: Path, parallel: bool
) -> None:
    permit, evidence = small_event(tmp_path)
    tamper(evidence, "DELETE FROM records WHERE id = 6")
    out = tmp_path / "report"
    with pytest.raises(ChainBroken) as caught:
        build_report(permit, evidence, out, parallel_verify=parallel)
    assert caught.value.record == 6
    assert "record 6" in str(caught.value)
    assert not out.exists()


@pytest.mark.parametrize("parallel", [False, True])
def test_a_rewritten_record_with_a_fresh_hash_breaks_the_next_one(
    tmp_path: Path, parallel: bool
) -> None:
    permit, evidence = small_event(tmp_path)
    rid = record_saying(evidence, b'"in_total":400')
    conn = sqlite3.connect(evidence)
    (prev,) = conn.execute("SELECT hash FROM records WHERE id = ?", (rid - 1,)).fetchone()
    kind, at, topic, payload, accepted, reason, old_hash = conn.execute(
        "SELECT kind, received_at, topic, payload, accepted, reason, hash FROM records "
        "WHERE id = ?",
        (rid,),
    ).fetchone()
    conn.close()
    # The record says 4,000 came in instead of 400, and its hash is recomputed to match
    # its new content on the true chain before it: it checks out on its own, and only
    # the next record, chained to the old hash, can show that it was rewritten.
    forged = payload.replace(b'"in_total":400', b'"in_total":4000')
    assert forged != payload
    fresh = record_hash(prev, rid, kind, at, topic, forged, accepted, reason)
    assert fresh != old_hash
    conn = sqlite3.connect(evidence)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET payload = ?, hash = ? WHERE id = ?", (forged, fresh, rid))
    conn.commit()
    conn.close()
    # What the file now holds is what the test's name says: the record is a gate count
    # saying 4,000, stored with the hash of that content on the true chain before it.
    (stored,) = [r for r in read_records(evidence) if r.id == rid]
    assert (stored.kind, stored.topic) == (kind, topic)
    assert topic.endswith("/gate/north/count")
    assert json.loads(stored.payload)["in_total"] == 4000
    assert stored.hash == fresh == record_hash(prev, rid, kind, at, topic, stored.payload,
                                               accepted, reason)  # fmt: skip
    checked = verify(evidence)
    assert (checked.ok, checked.first_bad, checked.count) == (False, rid + 1, rid)
    assert "does not match its hash" in (checked.problem or "")
    out = tmp_path / "report"
    with pytest.raises(ChainBroken) as caught:
        build_report(permit, evidence, out, parallel_verify=parallel)
    assert caught.value.record == rid + 1
    assert f"record {rid + 1}" in str(caught.value)
    assert "no report was written" in str(caught.value)
    assert not out.exists()


# -- an empty log ---------------------------------------------------------------------------


@pytest.mark.parametrize("started", [False, True])
def test_an_empty_log_gives_an_honest_empty_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, started: bool
) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = EvidenceLog.open(
        evidence, event_id="kent-summer-fest-2027", permit_sha256=sha256_file(permit)
    )
    if started:
        log.append_json("system", T0, {"event": "started", "clock": "wall"})
        log.commit()
    log.close()
    out = tmp_path / "report"
    proc = run_report(capsys, permit, evidence, out)
    # Nothing was heard: the record cannot show the assembly, and says so (exit 1).
    assert proc.returncode == 1, proc.stderr
    verdict = proc.stdout.splitlines()[-1]
    assert verdict.startswith(
        "RECORD INCOMPLETE: no breach was proven, but the record is incomplete: the evidence "
        "log holds no sensor or inspector messages; "
    )
    assert verdict.endswith(
        "; not watched: checklist items no inspector marked: C(1)(a), C(1)(b), C(1)(c), "
        "C(1)(d), C(1)(e), C(1)(f), C(1)(g), C(1)(h), C(1)(i), C(1)(j), C(2)(a), C(2)(b), "
        "C(2)(c), C(3), C(5), C(6), C(8), C(9), D, F; sensors never heard: north, south, "
        "lot-a, lot-b, first-aid"
    )
    with (out / "findings.csv").open(encoding="utf-8") as f:
        assert len(f.read().splitlines()) == 1  # the header only
    with (out / "timeline.csv").open(encoding="utf-8") as f:
        assert len(f.read().splitlines()) == 1
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'class="verdict record-incomplete"' in page
    assert "No alert was raised" in page
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["evidence"]["records"] == (2 if started else 1)
    for name in FILES:
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == manifest["files"][name]


# -- bad input ------------------------------------------------------------------------------


def test_bad_input_is_one_sentence_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    permit, evidence = small_event(tmp_path)
    cases: list[tuple[list[str], str]] = []
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("hello")
    missing = tmp_path / "missing.sqlite"
    cases.append(([str(permit), str(missing)], f"{missing}: no such file"))
    cases.append(([str(permit), str(not_sqlite)], f"{not_sqlite} is not an SQLite evidence log"))
    bad_permit = tmp_path / "bad.toml"
    bad_permit.write_text(
        permit.read_text().replace("persons_per_nurse = 500", "persons_per_nurse = 600")
    )
    cases.append(
        (
            [str(bad_permit), str(evidence)],
            f"{bad_permit} is invalid: staffing.persons_per_nurse: 600 persons per nurse is "
            "looser than the ordinance's 1 registered nurse per 500 persons (permit:C(9))",
        )
    )
    other = tmp_path / "other.toml"
    other.write_text(
        permit.read_text().replace('id = "kent-summer-fest-2027"', 'id = "other-fest"')
    )
    cases.append(
        (
            [str(other), str(evidence)],
            f"{evidence} is the evidence log of event 'kent-summer-fest-2027', but the permit "
            f"{other} is for 'other-fest'",
        )
    )
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for (p, e), expect in cases:
        proc = run_report(capsys, Path(p), Path(e), tmp_path / "never")
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"kent-ops: {expect}\n")
    proc = run_report(capsys, permit, evidence, a_file)
    assert (proc.returncode, proc.stderr) == (
        2,
        f"kent-ops: {a_file} is a file; --out names the folder the report is written to\n",
    )
    assert not (tmp_path / "never").exists()


# -- clean-up (permit:F) --------------------------------------------------------------------


def test_clean_up_is_done_open_not_recorded_or_not_done(tmp_path: Path) -> None:
    permit = load_permit(write_permit(tmp_path))
    tz = permit.timezone
    end = datetime(2027, 7, 4, 20, 15, tzinfo=tz)  # last on; the window was to run to 23:30
    deadline = datetime(2027, 7, 10, tzinfo=tz)  # the end of the fifth day after 4 July
    log_end = end + timedelta(days=10)

    def at(days: float) -> datetime:
        return end + timedelta(days=days)

    def mark(days: float, result: str = "ok") -> InspectionMark:
        return InspectionMark("insp-1", at(days), "F", result, "", 100)

    def note(days: float, text: str) -> InspectorNote:
        return InspectorNote("insp-2", at(days), text, None, 200)

    def clean_up(
        marks: list[InspectionMark],
        notes: list[InspectorNote] = [],  # noqa: B006 - never changed
        last_on: datetime | None = end,
        *,
        still_on: bool = False,
        until: datetime = log_end,
    ) -> CleanUp:
        return clean_up_status(
            tz, last_on, still_on=still_on, scheduled_end=permit.last_end,
            inspections=marks, notes=notes, log_end=until,
        )  # fmt: skip

    def status(marks: list[InspectionMark], notes: list[InspectorNote] = []) -> str:  # noqa: B006
        cu = clean_up(marks, notes)
        assert cu.deadline == deadline
        return cu.status

    assert status([mark(2)]) == "done"
    assert status([], [note(4.9, "CLEAN-UP OK, site clear")]) == "done"
    # No record of item F in the period: the Town's missing record, never "not done".
    assert status([]) == "not recorded"
    assert status([mark(-0.5)]) == "not recorded"  # while the assembly was on
    assert status([mark(-0.5, "deficient")]) == "not recorded"  # F binds after the end
    assert status([mark(6)]) == "not recorded"  # ok only after the deadline
    assert status([], [note(3, "clean-up not ok yet")]) == "not recorded"
    # Found deficient in the period and never made good by the deadline: not done.
    assert status([mark(2, "deficient")]) == "not done"
    assert status([mark(2, "deficient"), mark(6)]) == "not done"  # made good too late
    assert status([mark(2, "deficient"), mark(3)]) == "done"
    # Found dirty again after an ok, within the five days: the last mark decides.
    assert status([mark(1), mark(2, "deficient")]) == "not done"
    assert clean_up([], until=end + timedelta(days=1)).status == "open"
    # 23:59:59 on the fifth day is in time; midnight is not (not 120 h after 20:15).
    last_second = InspectionMark("insp-1", deadline - timedelta(seconds=1), "F", "ok", "", 1)
    assert status([last_second]) == "done"
    at_midnight = InspectionMark("insp-1", deadline, "F", "ok", "", 1)
    assert status([at_midnight]) == "not recorded"
    done = clean_up([mark(2)])
    assert done.satisfied_by is not None
    assert done.satisfied_by.at == at(2)
    assert done.ended_on == date(2027, 7, 4)
    assert not done.from_schedule
    # Still on when the log ends: the period has not begun, so clean-up is open.
    still = clean_up([mark(2)], last_on=None, still_on=True)
    assert (still.status, still.deadline, still.is_breach) == ("open", None, False)
    # No one ever counted: the period runs from the last window's scheduled end.
    never = clean_up([], last_on=None)
    assert never.from_schedule
    assert never.assembly_end == permit.last_end
    assert (never.status, never.is_breach, never.is_warning) == ("not recorded", False, True)


def test_clean_up_says_not_recorded_or_not_done_word_for_word(tmp_path: Path) -> None:
    permit = load_permit(write_permit(tmp_path))
    tz = permit.timezone
    end = datetime(2027, 7, 4, 20, 15, tzinfo=tz)
    deadline = datetime(2027, 7, 10, tzinfo=tz)

    def f_mark(at: datetime, result: str, note: str = "") -> InspectionMark:
        return InspectionMark("insp-2", at, "F", result, note, 7)

    def said(*marks: InspectionMark) -> tuple[str, bool, str]:
        cu = clean_up_status(
            tz, end, still_on=False, scheduled_end=permit.last_end, inspections=list(marks),
            notes=[], log_end=deadline + timedelta(days=3),
        )  # fmt: skip
        fmt = Fmt(tz)
        return cu.status, cu.is_breach, cu.sentence(fmt.when, fmt.midnight_ending)

    assert said() == (
        "not recorded",
        False,
        "not recorded: the deadline passed with no inspector's record of item F: the Town "
        "holds no record that the premises were inspected, which is not a finding that they "
        "were not cleaned",
    )
    found = f_mark(datetime(2027, 7, 6, 10, 0, tzinfo=tz), "deficient", "bins full")
    assert said(found) == (
        "not done",
        True,
        "not done: found deficient by insp-2 at 2027-07-06 10:00:00 (“bins full”), not "
        "marked done by the end of Friday 9 July 2027 (midnight)",
    )
    late = f_mark(datetime(2027, 7, 11, 9, 0, tzinfo=tz), "ok")
    assert said(found, late)[2].endswith(
        "not marked done by the end of Friday 9 July 2027 (midnight); marked ok by insp-2 at "
        "2027-07-11 09:00:00, after the deadline"
    )
    made_good = f_mark(datetime(2027, 7, 8, 9, 0, tzinfo=tz), "ok")
    assert said(found, made_good)[:2] == ("done", False)


def test_clean_up_recorded_by_a_note_shows_on_the_report(tmp_path: Path) -> None:
    permit = write_permit(
        tmp_path, windows=[("2027-07-04T10:00:00-04:00", "2027-07-04T10:30:00-04:00")]
    )
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, T0)
    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    log.gate("north", 0, 0)
    log.gate("north", 600, 200)
    log.gate("north", 1500, 200, 200)
    log.inspector("insp-3", "note", 86400, text="CLEAN-UP OK: trash gone, bins collected")
    log.inspector("insp-3", "inspection", 86400 * 6, item="F", result="ok")
    log.close(86400 * 6 + 1)
    out = tmp_path / "report"
    outcome = build_report(permit, evidence, out)
    cu = outcome.data.clean_up
    assert cu.status == "done"
    assert cu.satisfied_by is not None
    assert cu.satisfied_by.source == "note"
    assert outcome.data.verdict.word == "NO BREACH FOUND", outcome.data.verdict.line
    assert outcome.exit_code == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "CLEAN-UP OK: trash gone, bins collected" in page
    # Everyone left at 10:25: the assembly ended on 4 July, so the deadline is the end
    # of 9 July, whatever hour it ended at and whenever the window was to close.
    assert cu.assembly_end == utc(2027, 7, 4, 14, 25)
    assert cu.deadline == datetime(2027, 7, 10, 0, 0, tzinfo=cu.deadline.tzinfo)
    assert "the end of Friday 9 July 2027 (midnight)" in page


# -- the live record disagrees --------------------------------------------------------------


def test_a_live_alert_that_differs_from_the_replay_is_warned_about(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    permit, evidence = small_event(tmp_path)
    log = EvidenceLog.open(
        evidence, event_id="kent-summer-fest-2027", permit_sha256=sha256_file(permit)
    )
    # A well-chained record claiming an alert the engine never raised (a different
    # engine version, say): the chain verifies, the comparison must not.
    log.append_json(
        "alert",
        T0,
        {"id": "A-0042", "rule": "max-at-one-time", "subject": None, "state": "active",
         "since": T0.isoformat(), "raised_at": T0.isoformat(), "ended_at": None,
         "cleared_at": None},
    )  # fmt: skip
    log.commit()
    log.close()
    out = tmp_path / "report"
    proc = run_report(capsys, permit, evidence, out)
    assert proc.returncode == 1, proc.stderr  # the scripted nurse shortage
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert "A-0042 was logged live but not found on replay" in warnings[0]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "the replayed findings differ from the alerts" in page
    assert json.loads((out / "manifest.json").read_text())["replay_equals_live"] is False


def test_a_permit_file_changed_since_the_log_was_opened_is_warned_about(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    permit, evidence = small_event(tmp_path)
    permit.write_text(permit.read_text().replace("Kent Summer Music Festival", "Kent Fest"))
    proc = run_report(capsys, permit, evidence, tmp_path / "report")
    assert proc.returncode == 1
    assert "is not the permit file the evidence log was opened with" in proc.stderr
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "differs from the one the log was opened with" in page


def test_what_makes_the_log_less_trustworthy_is_named_in_data_quality(tmp_path: Path) -> None:
    """A lost broker session, a rolled-back log, a clock jump: each is said, not buried."""
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, utc(2027, 7, 4, 14, 0))
    log.gate("north", 0, 0)
    for event in ("broker-session-lost", "clock-jump", "clock-jump", "rollback-accepted"):
        log.log.append_json("system", log.at(5), {"event": event})
    log.close(10)
    out = tmp_path / "report"
    build_report(permit, evidence, out)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "the broker had lost the aggregator's session</b> (1 time)" in page
    assert "the host clock jumped (receive times kept the steady clock)</b> (2 times)" in page
    assert "the operator went on with a log behind its checkpoint</b> (1 time)" in page
