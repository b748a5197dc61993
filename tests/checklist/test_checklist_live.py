"""The facilities checklist through a real aggregator and a real Mosquitto (permit:C, D, F).

An inspector's mark goes in on ``kent/{e}/inspector/{who}/inspection``; the aggregator
records it, shows it in the status, holds ``facility-deficient`` for a deficient item
until it is marked ok or n/a, rebuilds all of that after a restart, and the report
states it as the evidence for permit:G. The aggregator runs in-process with the sensor
clock, so the payloads' ``ts`` decide every time checked here.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from checklist_support import WINDOW_END, running_aggregator, write_permit
from live_support import T0, TOPICS, Publisher, Watcher

from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import Permit, load_permit
from kent_ops.report.build import build_report

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def at(seconds: float) -> str:
    """The engine's ISO form of T0 + seconds, as status and alerts give times."""
    return f"2027-07-04T14:{int(seconds) // 60:02d}:{int(seconds) % 60:02d}Z"


@pytest.fixture
def permit(tmp_path: Path) -> Permit:
    return load_permit(write_permit(tmp_path))


def facility_alerts(watcher: Watcher) -> dict[str, dict[str, Any]]:
    return {k: a for k, a in watcher.alerts().items() if a.get("rule") == "facility-deficient"}


def counters_up(pub: Publisher, seconds: float = 0) -> None:
    """Every gate counter reports (nobody in yet), so any alert is certain, and only ours."""
    for gate in ("north", "south", "north-manual"):
        pub.gate(gate, 1, seconds, 0, 0)


def all_reporting(status: dict[str, Any]) -> bool:
    return all(g["last_seen"] for g in status["gates"].values())


def message_reasons(evidence: Path, topic_end: str) -> list[tuple[int, str | None]]:
    conn = sqlite3.connect(evidence)
    try:
        rows = conn.execute(
            "SELECT accepted, reason FROM records WHERE kind = 'message' AND topic LIKE ? "
            "ORDER BY id",
            (f"%{topic_end}",),
        ).fetchall()
    finally:
        conn.close()
    return rows


def test_deficient_holds_the_breach_until_marked_ok_then_it_clears(
    permit: Permit, tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    with running_aggregator(permit, evidence, broker, watcher):
        counters_up(publisher)
        publisher.mark("insp-1", "C(1)(h)", "deficient", 10, "common cup at water station 2")
        status = watcher.status(lambda s: "C(1)(h)" in s["checklist"])
        assert status["checklist"]["C(1)(h)"] == {
            "result": "deficient",
            "by": "insp-1",
            "at": at(10),
            "note": "common cup at water station 2",
        }
        # pending 0: raised at once, never listed as pending
        assert not [p for p in status["pending"] if p["rule"] == "facility-deficient"]
        (alert_id,) = status["active_alerts"]
        alert = watcher.alert(alert_id)
        assert alert["rule"] == "facility-deficient"
        assert alert["subject"] == "C(1)(h)"
        assert alert["cite"] == "permit:C(1)(h), permit:G"
        assert alert["severity"] == "breach"
        assert (alert["state"], alert["since"], alert["raised_at"]) == ("active", at(10), at(10))
        assert alert["ended_at"] is None
        assert alert["observed"]["note"] == "common cup at water station 2"
        assert alert["uncertain"] is False

        # Another inspector finds it put right: the breach ends, the alert waits clear_s.
        publisher.mark("insp-2", "C(1)(h)", "ok", 40)
        ended = watcher.alert(alert_id, lambda a: a["ended_at"] is not None)
        assert (ended["state"], ended["ended_at"], ended["cleared_at"]) == ("active", at(40), None)
        status = watcher.status(lambda s: s["checklist"]["C(1)(h)"]["result"] == "ok")
        assert status["checklist"]["C(1)(h)"]["by"] == "insp-2"
        assert status["active_alerts"] == [alert_id]

        publisher.gate("north", 2, 50, 0, 0)  # time passes (sensor clock): 10 s > clear_s
        cleared = watcher.alert(alert_id, lambda a: a["state"] == "cleared")
        assert cleared["cleared_at"] == at(43)
        assert watcher.status(lambda s: s["ts"] == at(50))["active_alerts"] == []

        # n/a also ends a deficiency; a second deficient item is its own alert.
        publisher.mark("insp-1", "C(2)(a)", "deficient", 60, "privies overflowing by stage B")
        second = watcher.status(lambda s: len(s["active_alerts"]) == 1 and s["ts"] == at(60))
        (second_id,) = second["active_alerts"]
        assert second_id != alert_id
        publisher.mark("insp-1", "C(2)(a)", "n/a", 70)
        assert watcher.alert(second_id, lambda a: a["ended_at"] is not None)["ended_at"] == at(70)
    assert set(facility_alerts(watcher)) == {alert_id, second_id}


def test_marks_that_cannot_be_taken_are_rejected_with_the_reason(
    permit: Permit, tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    with running_aggregator(permit, evidence, broker, watcher):
        counters_up(publisher)
        before = watcher.status(all_reporting)
        items = [i["item"] for i in before["checklist_items"]]
        assert "C(7)" not in items  # housing: this permit is not overnight
        assert "C(5)" in items  # food is served
        assert items[0] == "C(1)(a)"
        assert items[-1] == "F"
        assert before["checklist_items"][items.index("C(1)(h)")] == {
            "item": "C(1)(h)",
            "paragraph": "C(1) Drinking water",
            "text": "No common drinking cup provided or in use",
            "cite": "permit:C(1)(h)",
        }
        publisher.mark("insp-1", "C(7)", "deficient", 5, "no housing")
        publisher.mark("insp-1", "C(4)", "ok", 6)
        publisher.mark("insp-1", "C(1)(h)", "deficient", 7)  # no note
        publisher.mark("insp-1", "C(3)", "ok", 8)  # a good one, to know the others were taken
        after = watcher.status(lambda s: "C(3)" in s["checklist"])
        assert after["rejected"] == before["rejected"] + 3
        assert set(after["checklist"]) == {"C(3)"}
        assert after["active_alerts"] == []
    reasons = message_reasons(evidence, "/inspection")
    assert [accepted for accepted, _ in reasons] == [0, 0, 0, 1]
    assert "'C(7)' is unknown or does not apply to this permit" in str(reasons[0][1])
    assert "'C(4)' is unknown" in str(reasons[1][1])
    assert "needs a note" in str(reasons[2][1])


def test_a_restarted_aggregator_rebuilds_the_checklist_and_the_open_deficiency(
    permit: Permit, tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    with running_aggregator(permit, evidence, broker, watcher):
        counters_up(publisher)
        publisher.mark("insp-1", "C(1)(a)", "ok", 5)
        publisher.mark("insp-1", "C(8)", "deficient", 10, "east access road blocked by trucks")
        first = watcher.status(lambda s: "C(8)" in s["checklist"] and s["active_alerts"])
    (alert_id,) = first["active_alerts"]
    alert_before = watcher.alert(alert_id)

    watcher.forget(TOPICS.status)
    with running_aggregator(permit, evidence, broker, watcher) as agg:
        rebuilt = watcher.status(lambda s: "C(8)" in s["checklist"])
        assert rebuilt["checklist"] == first["checklist"]
        assert rebuilt["active_alerts"] == [alert_id]
        # The same deficiency continues: marking it ok ends the same alert id.
        publisher.mark("insp-2", "C(8)", "ok", 30)
        ended = watcher.alert(alert_id, lambda a: a["ended_at"] is not None)
        assert ended["since"] == alert_before["since"] == at(10)
        assert ended["ended_at"] == at(30)
    assert agg.engine.alerts[alert_id].subject == "C(8)"
    assert set(agg.engine.alerts) == {alert_id}


def test_the_report_states_a_live_inspection_round_as_permit_g_evidence(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    permit_path = write_permit(tmp_path)
    permit = load_permit(permit_path)
    evidence = tmp_path / "evidence.sqlite"
    after_end = (WINDOW_END - T0).total_seconds()
    with running_aggregator(permit, evidence, broker, watcher):
        counters_up(publisher)
        publisher.mark("insp-1", "C(1)(a)", "ok", 10)
        publisher.mark("insp-1", "C(2)(a)", "ok", 20)
        publisher.mark("insp-1", "C(3)", "n/a", 30, "sewage handled by the county plant")
        publisher.mark("insp-1", "C(1)(h)", "deficient", 60, "common cup at water station 2")
        publisher.mark("insp-2", "C(1)(h)", "deficient", 120, "still one cup, now at station 3")
        publisher.mark("insp-2", "C(1)(h)", "ok", 600, "paper cups handed out")
        publisher.mark("insp-2", "F", "ok", 900, "looks tidy so far")  # during: does not count
        publisher.mark("insp-3", "F", "ok", after_end + 2 * 86400, "site cleared, bins gone")
        watcher.status(lambda s: s["checklist"].get("F", {}).get("by") == "insp-3")

    outcome = build_report(permit_path, evidence, tmp_path / "report")
    data = outcome.data
    assert data.comparison.equal, data.comparison.problems
    (finding,) = [f for f in data.findings if f.rule == "facility-deficient"]
    assert (finding.subject, finding.cite) == ("C(1)(h)", "permit:C(1)(h), permit:G")
    assert finding.duration_s == 540
    assert not finding.uncertain
    assert data.clean_up.status == "done"
    assert data.clean_up.satisfied_by is not None
    assert data.clean_up.satisfied_by.by == "insp-3"
    assert data.clean_up.satisfied_by.source == "inspection"

    page = (tmp_path / "report" / "index.html").read_text()
    section = page.split('<section id="checklist">')[1].split("</section>")[0]
    assert "Deficiencies: the evidence for permit:G" in section
    row = next(r for r in section.split("<tr") if finding.id in r and "permit:G evidence" in r)
    assert "No common drinking cup provided or in use" in row
    assert "permit:C(1)(h), permit:G" in row
    assert "<td>2027-07-04 10:01:00</td>" in row  # start, local time (the zone is stated once)
    assert "<td>2027-07-04 10:10:00</td>" in row  # end
    assert "9 min 00 s" in row  # duration
    assert "<b>insp-1</b>: deficient — “common cup at water station 2”" in row
    assert "<b>insp-2</b>: deficient — “still one cup, now at station 3”" in row
    assert "<b>insp-2</b>: <b>ok</b> — “paper cups handed out”" in row  # put right
    # Every item's history, the ones not inspected too, and housing left out.
    for item, text in [
        ("C(1)(a)", "<b>ok</b>"),
        ("C(2)(a)", "<b>ok</b>"),
        ("C(3)", "<b>n/a</b> — “sewage handled by the county plant”"),
    ]:
        item_row = next(r for r in section.split("<tr") if f"<td><b>{item}</b></td>" in r)
        assert "<b>insp-1</b>: " + text in item_row
    c8 = next(r for r in section.split("<tr") if "<td><b>C(8)</b></td>" in r)
    assert "not inspected" in c8
    assert "<td><b>C(7)</b></td>" not in section
    f_row = next(r for r in section.split("<tr") if "<td><b>F</b></td>" in r)
    assert "does not count for clean-up" in f_row  # made during the event
    assert "counts for clean-up (permit:F)" in f_row
    assert "site cleared, bins gone" in f_row
    clean_up = page.split('<section id="clean-up">')[1].split("</section>")[0]
    assert "recorded done after the assembly ended and by the deadline" in clean_up
    assert "Recorded by insp-3" in clean_up
    assert timedelta(seconds=finding.duration_s) == timedelta(minutes=9)
