"""The inspector's panels, trend and actions as pure functions: no Textual, no broker."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import dashboard_samples as samples
import pytest
from rich.console import Console

from dashboards.common.bigtext import big_number
from dashboards.inspector.panels import (
    alert_detail,
    alert_history,
    alert_items,
    attendance_panel,
    compliance_panel,
    gate_rows,
    header_text,
    is_flashing,
    lot_rows,
    ordered_alerts,
    rules_table,
)
from dashboards.inspector.trend import AttendanceTrend
from dashboards.inspector.widgets.action_log import action_line
from kent_ops.core import wire
from kent_ops.core.inspector_actions import (
    ActionPayload,
    SentAction,
    ack_payload,
    adjust_payload,
    describe,
    encode_action,
    note_payload,
    recorded_entries,
    update_recorded,
)
from kent_ops.core.rules import RULES

NY = ZoneInfo("America/New_York")


def render(renderable: object, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None, legacy_windows=False)
    console.print(renderable)
    return console.export_text()


def styles_of(text: object, word: str) -> str:
    """The style over the first occurrence of ``word`` in a Rich Text (joined)."""
    from rich.text import Text

    assert isinstance(text, Text)
    start = text.plain.index(word)
    found = [str(text.style)] if text.style else []
    for span in text.spans:
        if span.start <= start < span.end:
            found.append(str(span.style))
    return " ".join(found)


def test_header_shows_event_permit_local_time_and_inspector() -> None:
    text = header_text(samples.status(), samples.EVENT, "insp-2", samples.NOW).plain
    assert "14:03:07 EDT" in text
    assert "Kent Summer Music Festival" in text
    assert "MG-2027-003 issued" in text
    assert "insp-2" in text


def test_header_flags_a_permit_not_issued_and_outside_hours() -> None:
    status = samples.status(
        permit={"number": "MG-2027-003", "status": "revoked"},
        window={"inside": False, "start": None, "end": None},
    )
    text = header_text(status, samples.EVENT, "insp-2", samples.NOW)
    assert "revoked" in text.plain
    assert "red" in styles_of(text, "revoked")
    assert "outside permitted hours" in text.plain


def test_attendance_panel_shows_the_figures_admit_and_uncertainty() -> None:
    out = render(attendance_panel(samples.status(), ((0.0, 1),), width=76), width=80)
    assert "ADMIT" in out
    assert "max 4,000" in out
    assert "threshold 500" in out
    assert "peak 3,300" in out
    assert "UNCERTAIN: south down" in out
    assert "last hour" in out


def test_attendance_panel_says_hold_and_shows_the_last_adjustment() -> None:
    adjustments = [
        {
            "by": "insp-2",
            "at": samples.ago(30),
            "attendance": 3050,
            "offset": -70,
            "reason": "sweep",
        }
    ]
    att = {**samples.status_data()["attendance"], "uncertain": False}
    status = samples.status(admit=False, adjustments=adjustments, attendance=att)
    out = render(attendance_panel(status, width=96), width=100)
    assert "HOLD" in out
    assert "adjusted to 3,050 (offset -70) by insp-2 at 14:02:35" in out
    assert "UNCERTAIN" not in out


@pytest.mark.parametrize("width", [12, 24, 36, 39, 44, 60, 76, 116])
def test_attendance_panel_keeps_the_figure_and_the_order_whole_at_any_width(width: int) -> None:
    att = {**samples.status_data()["attendance"], "current": 1_195_394, "peak": 1_195_394}
    text = attendance_panel(samples.status(attendance=att), ((0.0, 1),), width=width)
    lines = text.plain.split("\n")
    assert all(len(line) <= width for line in lines)
    figure = big_number("1,195,394")
    if len(figure[0]) <= width:
        assert figure[0] in text.plain  # the large digits, whole
    else:
        assert "1,195,394" in lines[0]  # too narrow for them: the figure in plain digits
    assert " ADMIT " in text.plain
    assert width < 20 or "max 4,000" in text.plain


def test_a_figure_too_wide_to_share_its_line_puts_the_order_under_it() -> None:
    att = {**samples.status_data()["attendance"], "current": 1_195_394}
    lines = attendance_panel(samples.status(attendance=att), width=39).plain.split("\n")
    assert lines[0] == big_number("1,195,394")[0]  # the digits alone on their lines
    assert lines[3].startswith(" ADMIT  max 4,000")  # then the order, whole
    side_by_side = attendance_panel(samples.status(), width=39).plain.split("\n")
    assert "ADMIT" in side_by_side[0]  # 3,120 leaves room beside it


def test_the_header_breaks_in_two_on_a_phone_and_keeps_the_permit_standing() -> None:
    status = samples.status(permit={"number": "MG-2027-003", "status": "revoked"})
    one = header_text(status, samples.EVENT, "insp-2", samples.NOW, width=120)
    assert one.plain.count("\n") == 0
    two = header_text(status, samples.EVENT, "insp-2", samples.NOW, width=40)
    first, second = two.plain.split("\n")
    assert first == "14:03 EDT  MG-2027-003 revoked"  # to the minute on a phone
    assert second.startswith("Kent Summer Music Festival")
    assert "red" in styles_of(two, "revoked")
    assert all(
        len(line) <= 20 for line in header_text(status, "e", "i", None, width=20).plain.split("\n")
    )


def test_staffing_on_a_phone_keeps_every_figure_whole() -> None:
    text = compliance_panel(samples.status(), width=26)
    assert text.plain.split("\n") == [
        "Doctors      1 of 1",
        "Nurses       6 of 7",
        "Security    18 of 20",
        "Car spa… 1,050 of 780",
        "Cars     1,010 of 1,100",
        "Entries  4,410 exits 1,290",
    ]  # "required" gave way first, then the labels
    assert "red" in styles_of(text, "6 of 7")
    wide = compliance_panel(samples.status(), width=36).plain
    assert "6 of 7 required" in wide


def test_attendance_panel_before_any_status() -> None:
    assert "Waiting for the aggregator" in render(attendance_panel(None, width=40))


def test_compliance_panel_colours_breach_red_and_near_amber() -> None:
    text = compliance_panel(samples.status(), width=56)
    out = render(text, width=60)
    assert "Nurses" in out
    assert "6 of 7 required" in out
    assert "Security" in out
    assert "18 of 20 declared" in out
    assert "Car spaces" in out
    assert "1,050 of 780 required" in out
    assert "Cars" in out
    assert "1,010 of 1,100 allowed" in out
    assert "red" in styles_of(text, "6 of 7")  # 6 on duty, 7 required
    assert "red" in styles_of(text, "18 of 20")  # 18 of 20 declared
    assert "dark_orange" in styles_of(text, "1,010 of 1,100")  # within 10%
    assert "dark_orange" in styles_of(text, "1 of 1 required")  # 1 of 1: no slack
    assert "red" not in styles_of(text, "1,050 of 780")


def test_gate_rows_show_each_counter_and_mark_offline_and_manual() -> None:
    rows = {row.key: row.cells for row in gate_rows(samples.status())}
    assert list(rows) == ["north", "north-manual", "south"]
    assert [c.text for c in rows["north"]] == ["●", "north", "2,210", "640", "1,570", "14", "2 s"]
    assert rows["south"][0] == ("✗", "bold red")
    assert rows["south"][1] == ("south", "bold red")
    assert rows["south"][-1] == ("OFF 1 min", "bold red")
    assert rows["north-manual"][5].text == "0.0"
    assert "italic" in rows["north-manual"][1].style


def test_lot_rows_colour_the_share_against_lot_full() -> None:
    rows = {row.key: row for row in lot_rows(samples.status())}
    assert [c.text for c in rows["lot-a"].cells] == ["lot-a", "600", "590", "10", "98%"]
    assert "red" in rows["lot-a"].cells[4].style  # 98% >= 95%: lot-full
    assert "dark_orange" in rows["lot-b"].cells[4].style  # 93%: within 10% of 95%


def test_a_sensor_heard_but_in_doubt_is_marked_and_says_why() -> None:
    """Stuck, or not heard since the broker restarted: the gate row shows ``?`` amber, the
    attendance line names it, a lot is marked, the staff figures carry a ``?``."""
    sensors = {
        "north": {"kind": "gate", "online": True, "last_seen": samples.ago(2), "stuck": True,
                  "doubt": "stuck"},
        "lot-b": {"kind": "lot", "online": True, "last_seen": samples.ago(7),
                  "doubt": "not heard since the broker restarted"},
    }  # fmt: skip
    medical = {**samples.status_data()["medical"], "uncertain": True}
    status = samples.status(sensors=sensors, medical=medical)
    rows = {row.key: row.cells for row in gate_rows(status)}
    assert rows["north"][0] == ("?", "bold dark_orange")
    assert rows["north"][-1] == ("STUCK 2 s", "bold dark_orange")
    assert rows["south"][0] == ("✗", "bold red")  # offline says so first
    lots = {row.key: row.cells for row in lot_rows(status)}
    assert lots["lot-b"][0] == ("? lot-b", "bold dark_orange")
    assert lots["lot-a"][0].text == "lot-a"
    assert "UNCERTAIN: south down; north stuck" in render(attendance_panel(status, width=100))
    staff = render(compliance_panel(status, width=60))
    assert "Doctors?" in staff
    assert "Nurses?" in staff


def test_panels_survive_an_empty_status() -> None:
    assert gate_rows(None) == []
    assert gate_rows(samples.status(gates={})) == []
    assert lot_rows(None) == []
    assert "—" in render(compliance_panel(None, width=36))


def test_alerts_are_ordered_active_first_by_severity() -> None:
    alerts = {a.id: a for a in samples.alerts()}
    assert [a.id for a in ordered_alerts(alerts)] == ["A-0004", "A-0003", "A-0001"]
    rows = alert_items(alerts, samples.status())
    assert [r.key for r in rows] == ["A-0004", "A-0003", "pending:0:security-staffing", "A-0001"]
    first = rows[0].text.plain
    assert "● BREACH" in first
    assert "nurse-ratio" in first
    assert "permit:C(9)" in first
    assert "since 13:58:05" in first
    assert "not acked" in first
    assert "6 nurses on duty; 3,120 persons need 7" in first
    assert "✓ insp-2" in rows[1].text.plain
    assert "not yet raised" in rows[2].text.plain
    assert "cleared" in rows[3].text.plain


def test_an_unacknowledged_active_breach_flashes_until_acknowledged() -> None:
    breach = samples.alert()
    assert is_flashing(breach)
    on = alert_items({"A-0004": breach}, None, flash_on=True)[0].text
    off = alert_items({"A-0004": breach}, None, flash_on=False)[0].text
    assert on != off
    acked = samples.alert(acknowledged=[{"by": "x", "at": samples.ago(1), "comment": "ok"}])
    assert not is_flashing(acked)
    assert not is_flashing(samples.alert(severity="warning"))
    assert not is_flashing(samples.alert(state="cleared"))


def test_alert_detail_has_figures_evidence_and_history() -> None:
    alert = samples.alert(
        acknowledged=[{"by": "insp-1", "at": samples.ago(100), "comment": "Called the organiser"}]
    )
    out = render(alert_detail(alert, samples.status()), width=120)
    assert "nurses on duty 6 · attendance 3,120" in out
    assert "nurses 7" in out
    assert "record 18233" in out
    assert "9f2c" + "0" * 60 in out
    assert RULES["nurse-ratio"].summary in out
    assert "insp-1 at 14:01:25: Called the organiser" in out
    assert "note by insp-2: Nurse tent B unstaffed" in out
    assert "This alert is no longer published" in render(alert_detail(None, None))


def test_alert_history_is_in_time_order() -> None:
    alert = samples.alert(
        ended_at=samples.ago(10),
        cleared_at=samples.ago(1),
        acknowledged=[{"by": "insp-1", "at": samples.ago(100), "comment": "c"}],
    )
    notes = [
        wire.NoteEntry(
            by="insp-2", at=samples.STATUS_TS - timedelta(seconds=50), text="t", alert="A-0004"
        )
    ]
    events = [what for _, what in alert_history(alert, notes)]
    assert events == [
        "condition began to hold",
        "alert raised",
        "acknowledged by insp-1: c",
        "note by insp-2: t",
        "condition ended",
        "alert cleared",
    ]


def test_help_lists_every_rule_with_its_citation() -> None:
    out = render(rules_table(), width=160)
    for rule in RULES.values():
        assert rule.name in out
        assert rule.cite in out


# -- the trend ----------------------------------------------------------------------------


def test_trend_keeps_one_point_a_second_and_one_hour() -> None:
    trend = AttendanceTrend()
    t0 = datetime(2027, 7, 4, 18, 0, tzinfo=UTC)
    assert trend.add(t0, 100)
    assert not trend.add(t0 + timedelta(milliseconds=300), 90)  # same second, lower
    assert trend.add(t0 + timedelta(milliseconds=600), 120)  # same second, higher
    assert len(trend) == 1
    assert trend.points()[0][1] == 120
    assert not trend.add(t0 - timedelta(seconds=5), 50)  # older than the newest
    for minute in range(1, 70):
        trend.add(t0 + timedelta(minutes=minute), minute)
    assert len(trend) == 61  # the last hour, both ends included
    assert trend.points()[0][0] == (t0 + timedelta(minutes=9)).timestamp()


def test_trend_takes_statuses() -> None:
    trend = AttendanceTrend()
    assert trend.add_status(samples.status())
    assert not trend.add_status(samples.status(ts=None))  # no time: no point on the line
    assert not trend.add_status(samples.status(ts=samples.ago(60)))  # older than the newest


# -- inspector actions --------------------------------------------------------------------


def test_payloads_are_exactly_spec_3() -> None:
    now = datetime(2027, 7, 4, 18, 3, 5, 120456, tzinfo=UTC)  # sent to the millisecond
    assert json.loads(encode_action(ack_payload("A-0007", "Called the organiser", now))) == {
        "ts": "2027-07-04T18:03:05.120000Z",
        "alert": "A-0007",
        "comment": "Called the organiser",
    }
    assert json.loads(encode_action(note_payload("No water", now))) == {
        "ts": "2027-07-04T18:03:05.120000Z",
        "text": "No water",
    }
    assert note_payload("No water", now, "A-0007").alert == "A-0007"
    assert json.loads(encode_action(adjust_payload(3050, "sweep count", now))) == {
        "ts": "2027-07-04T18:03:05.120000Z",
        "attendance": 3050,
        "reason": "sweep count",
    }
    with pytest.raises(ValueError, match="an adjustment needs a reason"):
        adjust_payload(3050, "  ", now)
    with pytest.raises(ValueError, match="negative"):
        adjust_payload(-1, "x", now)


def _sent(
    kind: str, payload: ActionPayload, status: wire.Status | None, alerts: dict[str, wire.Alert]
) -> SentAction:
    return SentAction(
        number=1,
        kind=kind,
        topic="t",
        payload=payload,
        inspector="insp-2",
        sent_at=samples.NOW,
        baseline=recorded_entries(kind, payload, "insp-2", status, alerts),
    )


def test_an_ack_is_recorded_when_the_alert_lists_it() -> None:
    alerts = {"A-0004": samples.alert()}
    payload = ack_payload("A-0004", "Called", samples.NOW)
    action = _sent("ack", payload, None, alerts)
    assert update_recorded(action, None, alerts, samples.NOW).state == "sent"
    other = [{"by": "x", "at": samples.iso(samples.NOW), "comment": "Called"}]
    by_other = {"A-0004": samples.alert(acknowledged=other)}
    assert update_recorded(action, None, by_other, samples.NOW).state == "sent"
    ack = {"by": "insp-2", "at": samples.iso(samples.NOW), "comment": "Called"}
    mine = {"A-0004": samples.alert(acknowledged=[ack])}
    assert update_recorded(action, None, mine, samples.NOW).state == "recorded"


def test_a_repeated_note_is_recorded_only_when_a_new_entry_appears() -> None:
    note = {
        "by": "insp-2",
        "at": samples.ago(60),
        "text": "Nurse tent B unstaffed",
        "alert": "A-0004",
    }
    status = samples.status(notes=[note])
    payload = note_payload("Nurse tent B unstaffed", samples.NOW, "A-0004")
    action = _sent("note", payload, status, {})
    assert update_recorded(action, status, {}, samples.NOW).state == "sent"
    later = samples.status(notes=[note, {**note, "at": samples.iso(samples.NOW)}])
    assert update_recorded(action, later, {}, samples.NOW).state == "recorded"


def test_an_adjustment_is_recorded_from_the_status() -> None:
    payload = adjust_payload(3050, "sweep", samples.NOW)
    action = _sent("adjust", payload, samples.status(), {})
    at = samples.iso(samples.NOW)
    entry = {"by": "insp-2", "at": at, "attendance": 3050, "offset": -70, "reason": "sweep"}
    done = update_recorded(action, samples.status(adjustments=[entry]), {}, samples.NOW)
    assert done.state == "recorded"
    assert done.recorded_at == samples.NOW


def test_describe_says_what_will_be_sent() -> None:
    assert describe(ack_payload("A-1", "c", samples.NOW)) == "acknowledge A-1: “c”"
    assert describe(note_payload("t", samples.NOW, "A-1")) == "note about A-1: “t”"
    assert describe(adjust_payload(3050, "r", samples.NOW)) == ("set attendance to 3,050: “r”")


def test_an_action_shows_when_it_was_recorded_and_when_the_inspector_made_it() -> None:
    made = datetime(2027, 7, 4, 14, 41, 2, tzinfo=UTC)  # 10:41:02 in Kent, the ack's ts
    payload = ack_payload("A-0004", "Called", made)
    action = _sent("ack", payload, None, {})
    sending = "… sending made 10:41:02 acknowledge A-0004: “Called”"
    assert action_line(action, NY).plain == sending
    recorded = samples.iso(made + timedelta(minutes=1))  # the engine's time, as in the report
    alert = {"A-0004": samples.alert(acknowledged=[{"by": "insp-2", "at": recorded,
                                                    "comment": "Called"}])}  # fmt: skip
    done = update_recorded(action, None, alert, made + timedelta(minutes=5))
    assert done.recorded_at == made + timedelta(minutes=1)
    assert action_line(done, NY).plain == (
        "✓ recorded 10:42:02 · made 10:41:02 acknowledge A-0004: “Called”"
    )
