"""Unit tests of the shared pieces: formatting, the connection verdict, fonts, renderables."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import dashboard_samples as samples
import pytest
from rich.console import Console
from rich.segment import Segment

from dashboards.common.bigtext import big_number, big_word, big_word_size, fit_scale
from dashboards.common.connection import ConnectionState, connection_problem
from dashboards.common.feed import (
    AlertUpdate,
    AvailabilityUpdate,
    BadPayload,
    CommandUpdate,
    FeedEvent,
    MqttFeed,
    StatusUpdate,
    classify,
)
from dashboards.common.format import (
    clean,
    event_zone,
    fmt_age,
    fmt_int,
    fmt_share,
    level,
    local_clock,
    parse_ts,
)
from dashboards.common.renderables import TrendLine, bar_text, bin_series, spark
from kent_ops.broker.client import parse_broker_url
from kent_ops.core import wire
from kent_ops.core.wire import Topics

NY = ZoneInfo("America/New_York")
T0 = datetime(2027, 7, 4, 18, 3, 5, tzinfo=UTC)


def render(renderable: object, width: int = 40) -> str:
    console = Console(width=width, record=True, color_system=None, legacy_windows=False)
    console.print(renderable)
    return console.export_text()


# -- format ------------------------------------------------------------------------------


def test_parse_ts_accepts_offsets_and_z_and_refuses_naive_times() -> None:
    assert parse_ts("2027-07-04T14:03:05-04:00") == T0
    assert parse_ts("2027-07-04T18:03:05Z") == T0
    assert parse_ts("2027-07-04T18:03:05") is None
    assert parse_ts("yesterday") is None
    assert parse_ts(None) is None


def test_times_show_in_the_event_zone() -> None:
    assert local_clock(T0, NY) == "14:03:05"
    assert local_clock(T0, NY, with_zone=True) == "14:03:05 EDT"
    assert local_clock(None, NY) == "—"
    assert event_zone(samples.status(timezone="America/New_York")) == NY
    assert event_zone(samples.status(timezone="Mars/Olympus")) == UTC
    assert event_zone(None) == UTC


def test_text_from_outside_loses_its_control_characters() -> None:
    assert clean("Nurse tent [b]B[/b]") == "Nurse tent [b]B[/b]"  # brackets stay as typed
    assert clean("line one\nline two\x07") == "line one line two"  # BEL removed


def test_missing_figures_are_a_dash_never_zero() -> None:
    assert fmt_int(3120) == "3,120"
    assert fmt_int(None) == "—"
    assert fmt_int(True) == "—"
    assert fmt_share(0.983) == "98%"
    assert fmt_share(None) == "—"
    assert fmt_age(4.7) == "4 s"
    assert fmt_age(125) == "2 min"
    assert fmt_age(7500) == "2 h 05 min"


@pytest.mark.parametrize(
    ("used", "limit", "expected"),
    [
        (3120, 4000, "ok"),
        (3600, 4000, "near"),  # exactly 90% of the limit: amber
        (3599, 4000, "ok"),
        (4000, 4000, "near"),  # at the limit is not past it
        (4001, 4000, "breach"),
        (7, 6, "breach"),  # 7 nurses required, 6 on duty
        (1, 1, "near"),  # one doctor required, one on duty: no slack
        (0, 0, "ok"),  # no demand is never a problem
        (None, 4000, "ok"),  # a missing figure is never coloured
    ],
)
def test_level_is_red_past_the_limit_and_amber_within_ten_percent(
    used: int | None, limit: int, expected: str
) -> None:
    assert level(used, limit) == expected


# -- connection --------------------------------------------------------------------------


def test_current_figures_raise_no_banner() -> None:
    state = ConnectionState(link="up", aggregator_online=True, status_ts=T0, received_at=T0)
    assert connection_problem(state, T0 + timedelta(seconds=15), NY) is None


def test_a_status_older_than_15_s_is_stale_by_its_ts() -> None:
    state = ConnectionState(link="up", aggregator_online=True, status_ts=T0, received_at=T0)
    problem = connection_problem(state, T0 + timedelta(seconds=16), NY)
    assert problem == "No status for 16 s; showing figures from 14:03:05"


def test_a_retained_old_status_is_stale_even_if_it_just_arrived() -> None:
    now = T0 + timedelta(minutes=10)
    state = ConnectionState(link="up", status_ts=T0, received_at=now)
    assert "No status for 10 min" in (connection_problem(state, now, NY) or "")


def test_a_status_ahead_of_the_clock_is_stale_once_nothing_arrives() -> None:
    # The demo runs simulated time ahead of the wall clock.
    state = ConnectionState(link="up", status_ts=T0 + timedelta(days=300), received_at=T0)
    assert connection_problem(state, T0 + timedelta(seconds=5), NY) is None
    assert connection_problem(state, T0 + timedelta(seconds=20), NY) is not None


def test_broker_down_comes_before_everything_else() -> None:
    state = ConnectionState(
        link="down",
        reason="connection lost",
        down_since=T0,
        aggregator_online=False,
        status_ts=T0,
    )
    assert connection_problem(state, T0, NY) == (
        "Broker unreachable since 14:03:05 (connection lost); showing figures from 14:03:05"
    )


def test_aggregator_offline_and_no_status_yet() -> None:
    offline = ConnectionState(link="up", aggregator_online=False, status_ts=T0, received_at=T0)
    assert connection_problem(offline, T0, NY) == (
        "The aggregator is offline; showing figures from 14:03:05"
    )
    waiting = ConnectionState(link="up")
    assert connection_problem(waiting, T0, NY) == "Waiting for the aggregator's first status…"
    assert connection_problem(ConnectionState(link="standalone"), T0, NY) is None
    assert "Connecting" in (connection_problem(ConnectionState(), T0, NY) or "")


# -- the feed's edge -----------------------------------------------------------------------

TOPICS = Topics("fest")


def _json(data: object) -> bytes:
    """By hand, for refusals only: a payload the aggregator's Structs would not encode."""
    return json.dumps(data).encode()


def test_classify_decodes_a_status_into_the_typed_record() -> None:
    got = classify(TOPICS, TOPICS.status, wire.encode(samples.status()), T0)
    assert isinstance(got, StatusUpdate)
    assert got.received_at == T0
    assert got.status == samples.status()
    assert isinstance(got.status, wire.Status)
    assert got.status.ts == samples.STATUS_TS  # an aware datetime, not a string
    assert got.status.gates["north"].in_ == 2210  # JSON "in"
    assert got.status.attendance.current == 3120


def test_classify_decodes_alerts_and_a_cleared_one() -> None:
    got = classify(TOPICS, TOPICS.alert("A-0004"), wire.encode(samples.alert()), T0)
    assert got == AlertUpdate("A-0004", samples.alert())
    assert isinstance(got.alert, wire.Alert)
    assert got.alert.worst.observed == {"nurses_on_duty": 5, "attendance": 3300}
    assert classify(TOPICS, TOPICS.alert("A-0001"), b"", T0) == AlertUpdate("A-0001", None)


def test_classify_decodes_gate_commands_and_a_cleared_one() -> None:
    got = classify(TOPICS, TOPICS.gate_command("north"), wire.encode(samples.command(False)), T0)
    assert got == CommandUpdate("north", samples.command(False))
    assert isinstance(got.command, wire.GateCommand)
    assert got.command.hold_at == 4000
    assert classify(TOPICS, TOPICS.gate_command("north"), b"", T0) == CommandUpdate("north", None)


def test_classify_reads_the_aggregators_availability() -> None:
    topic = TOPICS.aggregator_availability
    assert classify(TOPICS, topic, b"online", T0) == AvailabilityUpdate(True)
    assert classify(TOPICS, topic, b"offline", T0) == AvailabilityUpdate(False)


@pytest.mark.parametrize(
    "topic",
    [
        Topics("other").status,  # another event
        TOPICS.gate_count("north"),  # ours, but a sensor's: the dashboards do not show it
        TOPICS.inspector("insp-2", "note"),
        TOPICS.checkpoint,
        f"{TOPICS.prefix}/no/such/topic",
        "elsewhere/fest/status",
    ],
)
def test_classify_ignores_topics_the_dashboards_do_not_show(topic: str) -> None:
    assert classify(TOPICS, topic, wire.encode(samples.status()), T0) is None


@pytest.mark.parametrize(
    ("topic", "payload", "why"),
    [
        (TOPICS.status, b"not json", "not a valid status"),
        (TOPICS.status, b"[1, 2]", "not a valid status"),
        (TOPICS.status, b'{"no": "ts"}', "not a valid status"),
        (TOPICS.status, _json(samples.status_data(ts=None)), "status has no ts"),
        (TOPICS.status, _json(samples.status_data(ts="2027-07-04T18:03:05")), "offset"),
        (
            TOPICS.status,
            _json(samples.status_data(attendance={"current": "many"})),
            "attendance.current",
        ),
        (
            TOPICS.status,
            _json(samples.status_data(gates={"north": {"last_seen": "2027-07-04T18:03:05"}})),
            "gates.north.last_seen has no UTC offset",
        ),
        (TOPICS.alert("A-0004"), b'{"rule": "nurse-ratio"}', "not a valid alert"),
        (
            TOPICS.alert("A-0004"),
            _json(samples.alert_data(acknowledged=[{"by": "x", "at": "2027-07-04T18:03:05"}])),
            "acknowledged[0].at",
        ),
        (TOPICS.gate_command("north"), b'{"admit": "yes"}', "admit"),
    ],
)
def test_classify_rejects_bad_payloads_with_a_reason(topic: str, payload: bytes, why: str) -> None:
    with pytest.raises(BadPayload, match=re.escape(why)):
        classify(TOPICS, topic, payload, T0)


def test_the_feed_counts_a_bad_payload_and_carries_on() -> None:
    """A bad retained message is logged and counted, never raised into paho's loop."""
    got: list[FeedEvent] = []
    feed = MqttFeed(parse_broker_url("mqtt://127.0.0.1:1"), TOPICS, [], got.append)
    assert feed.receive(TOPICS.status, b"{broken") is None
    assert feed.receive(TOPICS.gate_command("north"), b'{"admit": 1}') is None
    assert feed.rejected == 2
    assert got == []
    assert feed.receive(Topics("other").status, b"{broken") is None  # not ours: not counted
    assert feed.rejected == 2
    good = feed.receive(TOPICS.status, wire.encode(samples.status()))
    assert isinstance(good, StatusUpdate)
    assert got == [good]


def test_the_feed_and_the_panels_import_no_textual() -> None:
    """The MQTT thread and the pure panels must be usable (and tested) without Textual."""
    code = (
        "import sys\n"
        "import dashboards.common.feed, dashboards.common.connection\n"
        "import dashboards.inspector.panels\n"
        "import dashboards.inspector.trend, dashboards.gate.panels, dashboards.gate.tally\n"
        "assert 'textual' not in sys.modules, sorted(m for m in sys.modules if 'textual' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_no_screen_or_widget_imports_its_app() -> None:
    """Screens ask their app with messages; an import back would be a cycle."""
    import ast
    from pathlib import Path

    import dashboards

    root = Path(dashboards.__file__).parent
    offenders = []
    checked = 0
    for app_dir in ("inspector", "gate"):
        for path in sorted((root / app_dir).glob("*/*.py")):  # screens/, widgets/, panels/
            checked += 1
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                if f"dashboards.{app_dir}.app" in names:
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert checked > 10  # the walk really found the screens and widgets
    assert offenders == []


# -- fonts and renderables -------------------------------------------------------------------


def styles_of(text: object, word: str) -> str:
    """The styles over the first occurrence of ``word`` in a Rich Text (joined)."""
    from rich.text import Text

    assert isinstance(text, Text)
    start = text.plain.index(word)
    found = [str(text.style)] if text.style else []
    found += [str(s.style) for s in text.spans if s.start <= start < s.end]
    return " ".join(found)


def test_big_number_draws_three_rows_per_character() -> None:
    rows = big_number("3,120")
    assert len(rows) == 3
    assert all(len(r) == len(rows[0]) for r in rows)
    assert rows[2][3] == "╻"  # the comma


def test_big_word_fits_the_space_it_is_given() -> None:
    assert big_word_size("ADMIT", 1) == (29, 3)
    scale = fit_scale("ADMIT", 80, 12)
    columns, rows = big_word_size("ADMIT", scale)
    assert columns <= 80
    assert rows <= 12
    assert big_word_size("ADMIT", scale + 1)[0] > 80 or big_word_size("ADMIT", scale + 1)[1] > 12
    lines = big_word("HOLD", 2)
    assert len(lines) == 5
    assert len({len(line) for line in lines}) == 1
    assert fit_scale("ADMIT", 3, 1) == 1  # never smaller than the smallest


def test_bar_marks_the_threshold_and_fills_to_the_value() -> None:
    text = bar_text(2000, 4000, 20, mark=500)
    assert text.plain == "██┃███████" + "░" * 10
    over = bar_text(5000, 4000, 10)
    assert over.plain == "█" * 10


def test_bin_series_keeps_the_peak_and_carries_values_over_gaps() -> None:
    points = [(0.0, 10), (1.0, 30), (2.0, 20), (8.0, 5)]
    assert bin_series(points, 0, 10, 5) == [30, 20, 20, 20, 5]
    assert bin_series([(5.0, 7)], 0, 10, 4) == [None, None, 7, 7]
    assert bin_series(points, 10, 0, 5) == []
    assert spark([0, 50, 100, None], 100) == "▁▅█ "


def test_trend_line_renders_at_the_width_it_is_given() -> None:
    out = render(TrendLine([(0.0, 0), (3600.0, 100)], 3600.0, top=100), width=12).rstrip("\n")
    assert len(out) == 12
    assert out.endswith("█")


def test_bar_is_a_few_runs_however_wide() -> None:
    text = bar_text(2000, 4000, 200, mark=500)
    assert len(text.spans) <= 4  # filled, the mark, filled, empty: not a span a cell
    assert [str(s.style) for s in text.spans] == ["green", "bold bright_white", "green", "grey50"]


def test_columns_line_up_and_the_names_give_way_before_the_figures() -> None:
    from rich.text import Text

    from dashboards.common.renderables import columns_text

    rows = [
        (Text("Nurses", style="red"), Text("6", style="red"), Text("of 7", style="red")),
        (Text("Car spaces"), Text("1,050"), Text("of 780")),
    ]
    right = (False, True, False)
    wide = columns_text(rows, 40, right=right, give_way=((0, 4),))
    assert wide.plain.split("\n") == ["Nurses         6 of 7", "Car spaces 1,050 of 780"]
    assert styles_of(wide, "Nurses") == "red"
    assert styles_of(wide, "6 of") == "red"
    assert "red" not in styles_of(wide, "         6")  # the padding is plain
    narrow = columns_text(rows, 18, right=right, give_way=((0, 4),))
    lines = narrow.plain.split("\n")
    assert all(len(line) <= 18 for line in lines)
    assert [line.split()[-3] for line in lines] == ["6", "1,050"]  # the figures whole
    gone = columns_text([(Text("a"), Text("1"), Text("x"))], 3, give_way=((2, 0),))
    assert gone.plain == "a 1"  # a column given way to nothing takes its gap with it


def test_fit_text_cuts_or_pads_to_the_width_and_keeps_the_styles() -> None:
    from rich.text import Text

    from dashboards.common.renderables import fit_text

    text = Text("HOLD", style="bold red")
    assert fit_text(text, 6).plain == "HOLD  "
    assert fit_text(text, 6, right=True).plain == "  HOLD"
    assert fit_text(text, 3).plain == "HO…"
    assert fit_text(text, 0).plain == ""
    assert styles_of(fit_text(text, 6, right=True), "HOLD") == "bold red"


def test_fit_pads_figures_right_and_cuts_with_an_ellipsis() -> None:
    from dashboards.common.widgets.rows_table import fit

    assert fit("2,210", 7, right=True) == "  2,210"
    assert fit("north", 7, right=False) == "north  "
    assert fit("north-manual", 6, right=False) == "north…"
    assert fit("● x", 3, right=False) == "● x"


def test_a_newer_status_replaces_one_still_waiting_but_alerts_do_not() -> None:
    from dashboards.common.messages import AlertReceived, StatusReceived

    older = StatusReceived(samples.status(), T0)
    newer = StatusReceived(samples.status(ts=samples.iso(samples.NOW)), T0)
    assert older.can_replace(newer)
    assert not older.can_replace(AlertReceived("A-1", None))
    assert not AlertReceived("A-1", None).can_replace(AlertReceived("A-2", None))


@pytest.mark.parametrize("width", [30, 38, 60, 100])
def test_an_entry_as_lines_reads_as_its_grid_does(width: int) -> None:
    """The alert list draws each entry as lines (cheap to redraw twice a second when a
    breach flashes): the same words, wrapped under the heading, the mark in its style."""
    from rich.console import Console

    from dashboards.inspector.panels import alert_items

    alerts = {a.id: a for a in samples.alerts()}
    console = Console(width=width, color_system="truecolor", legacy_windows=False)
    for flash_on in (True, False):
        for item in alert_items(alerts, samples.status(), flash_on=flash_on):
            grid = console.render_lines(item.renderable(), console.options, pad=False)
            lines = console.render_lines(item.lines(width), console.options, pad=False)
            assert cells(lines) == cells(grid)


def cells(lines: list[list[Segment]]) -> list[list[tuple[str, str]]]:
    """Each line's characters with their styles, trailing blanks left out."""
    out = []
    for line in lines:
        row = [(char, str(seg.style or "")) for seg in line for char in seg.text]
        while row and row[-1][0] == " ":
            row.pop()
        out.append([(c, st if c != " " or "on " in st else "") for c, st in row])
    return out
