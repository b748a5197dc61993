"""The checklist's pure parts: what applies, how each item reads, the inspection payload.

The statuses come from a real engine fed real inspection payloads, so these check the
dashboard against what the aggregator really publishes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from checklist_support import engine_status, write_permit
from rich.console import Console

from dashboards.inspector.checklist_panels import (
    checklist_counts,
    checklist_entries,
    checklist_summary,
    deficiency_alert,
    item_detail,
)
from dashboards.inspector.panels import alert_detail, alert_items
from dashboards.inspector.screens.checklist import waiting_items
from kent_ops.core.checklist import CHECKLIST
from kent_ops.core.inspector_actions import (
    SentAction,
    describe,
    encode_action,
    inspection_payload,
    recorded_entries,
    update_recorded,
)
from kent_ops.core.permit import load_permit

NOW = datetime(2027, 7, 4, 14, 5, tzinfo=UTC)


def plain(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize(
    ("overnight", "food", "housing", "food_item"),
    [(False, True, False, True), (True, True, True, True), (False, False, False, True)],
)
def test_the_status_lists_exactly_the_items_that_apply(
    tmp_path: Path, overnight: bool, food: bool, housing: bool, food_item: bool
) -> None:
    permit = load_permit(write_permit(tmp_path, overnight=overnight, food_served=food))
    status, _ = engine_status(permit, [])
    items = [i.item for i in status.checklist_items]
    assert ("C(7)" in items) is housing
    assert ("C(5)" in items) is food_item
    others = [c.item for c in CHECKLIST if c.item not in ("C(5)", "C(7)")]
    assert [i for i in items if i not in ("C(5)", "C(7)")] == others
    entries = checklist_entries(status)
    shown = [e.key for e in entries if not e.is_heading]
    assert shown == items
    headings = [e.key for e in entries if e.is_heading]
    assert headings[0] == "group:C(1) Drinking water"
    assert headings[-2:] == ["group:D Inspection", "group:F Clean-up"]
    assert ("group:C(7) Housing" in headings) is housing


def test_each_item_shows_its_state_and_who_marked_it_when(tmp_path: Path) -> None:
    permit = load_permit(write_permit(tmp_path))
    status, alerts = engine_status(
        permit,
        [
            ("insp-1", "C(1)(a)", "ok", "", 10),
            ("insp-1", "C(1)(h)", "deficient", "common cup at water station 2", 60),
            ("insp-2", "C(3)", "n/a", "", 90),
        ],
    )
    entries = {e.key: e for e in checklist_entries(status)}
    a, h, c3, f = entries["C(1)(a)"], entries["C(1)(h)"], entries["C(3)"], entries["F"]
    assert (a.state.plain, a.who.plain) == ("✓ ok", "insp-1 10:00:10")  # event local time
    assert (h.state.plain, h.who.plain) == ("✗ DEFICIENT", "insp-1 10:01:00")
    assert h.note is not None
    assert h.note.plain == "“common cup at water station 2”"
    assert (c3.state.plain, c3.who.plain) == ("– n/a", "insp-2 10:01:30")
    assert (f.state.plain, f.who.plain, f.note) == ("· unmarked", "", None)
    assert "1 deficient" in entries["group:C(1) Drinking water"].heading.plain
    assert checklist_counts(status) == {None: 17, "ok": 1, "deficient": 1, "n/a": 1}
    assert checklist_summary(status) == (
        "Checklist: 20 items · 1 ok · 1 deficient · 1 n/a · 17 unmarked"
    )
    by_id = {a.id: a for a in alerts}
    alert = deficiency_alert("C(1)(h)", by_id)
    assert alert is not None
    assert alert.cite == "permit:C(1)(h), permit:G"
    detail = plain(item_detail("C(1)(h)", status, by_id))
    assert "No common drinking cup provided or in use  permit:C(1)(h)" in detail
    assert "marked by insp-1 at 10:01:00: “common cup at water station 2”" in detail
    assert f"{alert.id} facility-deficient  permit:C(1)(h), permit:G  since 10:01:00" in detail
    assert "Not marked yet." in plain(item_detail("F", status, by_id))


def test_an_item_sent_but_not_yet_recorded_says_so(tmp_path: Path) -> None:
    permit = load_permit(write_permit(tmp_path))
    status, _ = engine_status(permit, [])
    entries = {e.key: e for e in checklist_entries(status, {"C(8)": "ok"})}
    assert entries["C(8)"].who.plain == "… sent: ok"
    sent = SentAction(1, "inspection", "t", inspection_payload("C(8)", "ok", NOW), "i", NOW)
    assert waiting_items((sent,)) == {"C(8)": "ok"}
    assert waiting_items((sent, replace(sent, number=2, state="delivered"))) == {"C(8)": "ok"}
    assert waiting_items((sent, replace(sent, number=2, state="recorded"))) == {}


def test_no_status_yet_shows_no_items_and_says_why() -> None:
    assert checklist_entries(None) == []
    assert "Waiting for the aggregator" in plain(item_detail(None, None, {}))


def test_the_inspection_payload_is_spec_3s_and_a_deficient_one_needs_a_note() -> None:
    assert json.loads(encode_action(inspection_payload("C(1)(h)", "ok", NOW))) == {
        "ts": "2027-07-04T14:05:00Z",
        "item": "C(1)(h)",
        "result": "ok",
    }
    marked = inspection_payload("C(1)(h)", "deficient", NOW, "  common cup ")
    assert json.loads(encode_action(marked)) == {
        "ts": "2027-07-04T14:05:00Z",
        "item": "C(1)(h)",
        "result": "deficient",
        "note": "common cup",
    }
    with pytest.raises(ValueError, match="needs a note"):
        inspection_payload("C(1)(h)", "deficient", NOW, "   ")
    with pytest.raises(ValueError, match="result must be"):
        inspection_payload("C(1)(h)", "fine", NOW)
    assert describe(inspection_payload("C(3)", "n/a", NOW)) == "mark C(3) n/a"
    assert (
        describe(inspection_payload("C(3)", "deficient", NOW, "leak"))
        == "mark C(3) deficient: “leak”"
    )


def test_a_marking_is_recorded_once_the_status_shows_it_by_this_inspector(
    tmp_path: Path,
) -> None:
    permit = load_permit(write_permit(tmp_path))
    payload = inspection_payload("C(1)(h)", "deficient", NOW, "cup")
    before, _ = engine_status(permit, [("insp-1", "C(1)(h)", "ok", "", 5)])
    baseline = recorded_entries("inspection", payload, "insp-1", before, {})
    assert baseline == frozenset()
    action = SentAction(1, "inspection", "t", payload, "insp-1", NOW, baseline=baseline)
    assert update_recorded(action, before, {}, NOW).state == "sent"
    by_other, _ = engine_status(permit, [("insp-2", "C(1)(h)", "deficient", "cup", 6)])
    assert update_recorded(action, by_other, {}, NOW).state == "sent"
    after, _ = engine_status(permit, [("insp-1", "C(1)(h)", "deficient", "cup", 6)])
    assert update_recorded(action, after, {}, NOW).state == "recorded"
    # The same mark again (a re-inspection) is recorded when its new time shows.
    again = SentAction(
        2,
        "inspection",
        "t",
        payload,
        "insp-1",
        NOW,
        baseline=recorded_entries("inspection", payload, "insp-1", after, {}),
    )
    assert update_recorded(again, after, {}, NOW).state == "sent"
    later, _ = engine_status(
        permit,
        [
            ("insp-1", "C(1)(h)", "deficient", "cup", 6),
            ("insp-1", "C(1)(h)", "deficient", "cup", 9),
        ],
    )
    assert update_recorded(again, later, {}, NOW).state == "recorded"


def test_the_alert_list_shows_a_deficiency_by_rule_cite_and_the_items_words(
    tmp_path: Path,
) -> None:
    permit = load_permit(write_permit(tmp_path))
    status, alerts = engine_status(
        permit, [("insp-1", "C(2)(c)", "deficient", "privy 20 m from the well", 60)]
    )
    (item,) = [i for i in alert_items({a.id: a for a in alerts}, status) if "A-" in i.key]
    text = item.text.plain
    assert "● BREACH" in text
    assert "facility-deficient [C(2)(c)]  permit:C(2)(c), permit:G  since 10:01:00" in text
    assert "No privy can leak into water; vaults closed to flies — found: “privy 20 m from" in text
    detail = plain(alert_detail(alerts[0], status))
    assert "Requirement   C(2)(c): No privy can leak into water; vaults closed to flies" in detail
    # the engine's worst figure is {"observed": …, "required": …}: shown as figures
    (worst,) = [line for line in detail.splitlines() if line.startswith("Worst")]
    assert "note privy 20 m from the well" in worst
    assert "{" not in worst
