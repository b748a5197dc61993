"""The law on the inspector's screen, from a real engine: the permit's standing after the
Clerk revoked it, whether the assembly is on, persons per property with its owner, and
each rule's shares as percentages. Also the pure pieces of this round: the Clerk's
payload and how it is seen recorded, the no-aggregator sentence, the tally's fate and
the demo's notice."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import dashboard_samples as samples
import msgspec
import pytest
from engine_samples import EVENT, afternoon, three_properties
from rich.console import Console

from dashboards.common.clock import fixed_clock
from dashboards.common.connection import ConnectionState, connection_problem
from dashboards.common.format import clean, fmt_figure
from dashboards.gate.panels import gate_order, order_details, tally_text
from dashboards.gate.tally import TallyState
from dashboards.inspector.app import make_inspector_app
from dashboards.inspector.panels import (
    alert_detail,
    compliance_title,
    header_text,
    permit_alarm,
    property_rows,
)
from dashboards.inspector.widgets.notice import fitting_lines
from dashboards.inspector.widgets.tables import PropertiesTable
from kent_ops.commands.cli import main
from kent_ops.core.inspector_actions import (
    CLERK_PERMIT,
    SentAction,
    describe,
    encode_action,
    permit_payload,
    recorded_entries,
    update_recorded,
)
from kent_ops.core.wire import Topics

NY = ZoneInfo("America/New_York")


def render(renderable: object, width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


# -- the permit, the assembly, the properties ------------------------------------------


def test_a_revoked_permit_says_since_when_and_by_which_resolution() -> None:
    day = afternoon(revoked=True)
    alarm = permit_alarm(day.status)
    assert alarm is not None
    assert alarm.plain.startswith(" PERMIT MG-2027-003 REVOKED  since 14:05:00 EDT")
    assert "resolution TB-2027-41" in alarm.plain
    assert "HOLD from 500 persons (permit:A, G)" in alarm.plain
    assert "red" in str(alarm.spans[0].style)
    assert "revoked" in header_text(day.status, EVENT, "insp-2", day.now).plain


def test_an_issued_permit_raises_no_alarm() -> None:
    assert permit_alarm(afternoon().status) is None
    assert permit_alarm(None) is None


def test_the_staffing_title_says_whether_the_assembly_is_on() -> None:
    assert compliance_title(afternoon().status) == "Staffing & parking · assembly on"
    off = samples.status(assembly={"on": False, "window": None})
    assert compliance_title(off) == "Staffing & parking · assembly off"


def test_each_property_shows_its_persons_and_owner() -> None:
    day = three_properties()
    rows = property_rows(day.status)
    cells = {row.key: [c.text for c in row.cells] for row in rows}
    assert cells == {
        "main-field": ["main-field", "R. Smith", "1,770"],
        "overflow-parking": ["overflow-parking", "T. Alvarez", "0"],
        "camping-meadow": ["camping-meadow", "Kent Grange Association", "430"],
    }
    assert sum(p.attendance for p in day.status.properties.values()) == 2_200
    assert property_rows(afternoon().status) == []  # one property: its total is attendance


async def test_the_properties_table_shows_only_with_several_properties() -> None:
    for day, shown in ((three_properties(), True), (afternoon(), False)):
        app = make_inspector_app(
            day.status.event,
            None,
            "insp-2",
            clock=fixed_clock(day.now),
            statuses=[day.status],
            blink=False,
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            table = app.screen.query_one(PropertiesTable)
            assert table.display is shown
            if shown:
                assert table.row_count == 3
                assert app.screen.region.contains_region(table.region)


def test_the_gate_view_shows_the_hold_reason_the_aggregator_gives() -> None:
    """After the revocation the engine tells every gate to HOLD, and says why (permit:A)."""
    day = afternoon(revoked=True)
    command = day.commands["north"]
    assert command.admit is False
    assert "the permit was revoked at 14:05: admit no one" in command.reason
    order = gate_order(command, day.status)
    assert order.word == "HOLD"
    assert order.reason == command.reason
    assert command.reason in order_details(order).plain


# -- figures ----------------------------------------------------------------------------


def test_shares_show_as_percentages_in_an_alerts_figures() -> None:
    day = afternoon()
    lot_full = next(a for a in day.alerts if a.rule == "lot-full")
    detail = render(alert_detail(lot_full, day.status))
    assert "share 98%" in detail
    assert "Required      share below 95%" in detail
    assert "share 1" not in detail
    assert fmt_figure("share_below", 0.95) == "95%"
    assert fmt_figure("occupied", 590) == "590"
    assert fmt_figure("note", "[b]x\x07") == "[b]x"


def test_text_from_outside_loses_escapes_and_long_ids_are_cut() -> None:
    assert clean("\x1b[31mred\x07") == "[31mred"  # ESC and BEL gone; what is left is text
    assert clean("a\u202eb") == "ab"
    assert clean("x" * 100, limit=10) == "x" * 9 + "…"


# -- the Clerk's change ---------------------------------------------------------------


def test_the_clerks_payload_is_the_wires_clerk_permit() -> None:
    now = datetime(2027, 7, 4, 18, 20, tzinfo=UTC)
    payload = permit_payload("revoked", now + timedelta(minutes=10), " TB-2027-41 ", "x", now)
    assert json.loads(encode_action(payload)) == {
        "ts": "2027-07-04T18:20:00Z",
        "status": "revoked",
        "effective_at": "2027-07-04T18:30:00Z",
        "resolution": "TB-2027-41",
        "reason": "x",
    }
    assert describe(payload, NY) == ("revoke the permit from 14:30:00 by resolution TB-2027-41")


def test_the_clerks_change_is_recorded_when_the_status_shows_it() -> None:
    issued, revoked = afternoon(), afternoon(revoked=True)
    payload = permit_payload("revoked", revoked.now, "TB-2027-41", "", revoked.now)
    baseline = recorded_entries(CLERK_PERMIT, payload, "town-clerk", issued.status, {})
    assert baseline == frozenset()
    action = SentAction(
        number=1,
        kind=CLERK_PERMIT,
        topic=Topics("kent-summer-fest-2027").clerk_permit("town-clerk"),
        payload=payload,
        inspector="town-clerk",
        sent_at=revoked.now,
    )
    assert update_recorded(action, issued.status, {}, revoked.now).state == "sent"
    assert update_recorded(action, revoked.status, {}, revoked.now).state == "recorded"
    another = replace(action, payload=msgspec.structs.replace(payload, resolution="TB-2027-99"))
    assert update_recorded(another, revoked.status, {}, revoked.now).state == "sent"


# -- the event check, the tally, the demo's notice -----------------------------------


def test_no_aggregator_for_the_event_is_said_after_10_s_of_silence() -> None:
    now = datetime(2027, 7, 4, 18, tzinfo=UTC)
    state = ConnectionState(
        link="up", event_id="kent-summer-fest-2o27", broker_url="mqtt://broker:1883", up_at=100.0
    )
    waiting = "Waiting for the aggregator's first status…"
    assert connection_problem(state, now, NY, monotonic=109.9) == waiting
    assert connection_problem(state, now, NY, monotonic=110.0) == (
        "No aggregator for event kent-summer-fest-2o27 on mqtt://broker:1883: "
        "check --event (and --broker)"
    )
    state.aggregator_online = False  # its retained last will: it exists, it is down
    assert connection_problem(state, now, NY, monotonic=500.0) == (
        "The aggregator is offline; showing no figures yet"
    )


def test_the_tally_says_it_reaches_no_one_without_an_aggregator() -> None:
    state = TallyState(seq=2, in_total=2, out_total=0)
    text = tally_text(state, None, "north", sent=2, unheard=True)
    assert "#2 not counted: no aggregator for this event on the broker" in text.plain
    assert "#2 sent, not yet counted" in tally_text(state, None, "north", sent=2).plain


def test_the_notice_shows_whole_lines_or_only_the_first() -> None:
    lines = ["Demo: broker mqtt://127.0.0.1:1883", "  kent-ops gate north --event e --broker b"]
    assert fitting_lines(lines, 60) == lines
    assert fitting_lines(lines, 40) == lines[:1]


def test_a_clerk_id_that_cannot_be_in_a_topic_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["dashboard", "--event", EVENT, "--clerk", "town/clerk"]) == 2
    assert capsys.readouterr().err.strip() == (
        "kent-ops: clerk id 'town/clerk' cannot be used in an MQTT topic"
    )
