"""The gate view's panels and the manual tally's file, without Textual or a broker."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import dashboard_samples as samples
import pytest

from dashboards.gate.panels import GateOrder, counts_text, gate_order, order_details, tally_text
from dashboards.gate.tally import ManualTally, TallyState, manual_gate, tally_path
from kent_ops.core.gate_view import ORDER_COLOURS
from sensors.device import MemoryLink

T = datetime(2027, 7, 4, 18, 3, 5, tzinfo=UTC)


def test_the_command_decides_the_order() -> None:
    order = gate_order(samples.command(admit=False), samples.status(admit=True))
    assert order.word == "HOLD"
    assert order.source == "command"
    # The live attendance comes from the status: a command is only republished on change.
    assert (order.attendance, order.hold_at, order.resume_below) == (3120, 4000, 3960)
    alone = gate_order(samples.command(admit=True), None)
    assert alone.word == "ADMIT"
    assert alone.attendance == 3120


def test_without_a_command_the_status_is_shown_and_said_to_be() -> None:
    order = gate_order(None, samples.status(admit=False))
    assert order.word == "HOLD"
    assert order.source == "status"
    assert "no order for this gate yet" in order.reason
    nothing = gate_order(None, None)
    assert nothing.word == "NO ORDER"
    assert nothing.admit is None


def test_order_details_colour_attendance_against_hold_at() -> None:
    text = order_details(gate_order(samples.command(admit=False), None))
    assert "Attendance 4,010 · hold at 4,000" in text.plain
    assert "admit again below 3,960" in text.plain
    assert "attendance at hold_at" in text.plain
    # On the red or green sign a coloured figure would vanish: past hold_at is a black chip,
    # near it a yellow one.
    assert any("on black" in str(s.style) for s in text.spans)
    near = order_details(GateOrder(admit=True, attendance=3700, hold_at=4000))
    assert any("on yellow" in str(s.style) for s in near.spans)
    calm = order_details(GateOrder(admit=True, attendance=3000, hold_at=4000))
    assert not any(" on " in str(s.style) for s in calm.spans)


def test_counts_show_this_gate_and_tell_the_deputy_when_its_counter_is_down() -> None:
    assert "in 2,210  out 640  net 1,570  14/min" in counts_text(samples.status(), "north").plain
    down = counts_text(samples.status(), "south").plain
    assert "COUNTER OFFLINE (last seen 1 min ago): use the manual tally" in down
    assert "no figures for this gate" in counts_text(samples.status(), "west").plain


def test_tally_text_says_what_became_of_the_taps_in_words() -> None:
    """Sent is not counted: the aggregator's status (north-manual at in 12, out 0) says
    what it counted, and a tap it did not count in 15 s says so, never with a tick."""
    status = samples.status()
    line = lambda state, **facts: tally_text(state, status, "north", **facts).plain  # noqa: E731
    assert "  not used yet" in line(TallyState(), sent=0)
    three = TallyState(seq=3, in_total=2, out_total=1)
    assert "  #3 counted" in line(three, sent=3)  # 12 counted reach the 3 taps made here
    many = TallyState(seq=9, in_total=14, out_total=0)  # two more than the aggregator has
    assert "  #14 not yet sent: waiting for the broker" in line(many, sent=12, waiting_s=None)
    assert "  #14 sent, not yet counted" in line(many, sent=14, waiting_s=3.0)
    late = line(many, sent=14, waiting_s=15.0)
    assert "  #14 not counted by the aggregator: tell the command post" in late
    assert "✓" not in late
    assert "  #14 not sent: no broker" in line(many, sent=None)
    assert "aggregator has in 12 out 0" in line(three, sent=3)
    unlisted = tally_text(three, status, "south", sent=3).plain
    assert "south-manual is not a gate in the permit" in unlisted


def readings(link: MemoryLink) -> list[dict]:
    """The tally's count messages (not its availability), decoded."""
    return [json.loads(m.payload) for m in link.drain() if m.topic.endswith("/count")]


def test_the_tally_counts_up_saves_first_and_continues_after_a_restart(tmp_path: Path) -> None:
    path = tally_path(tmp_path / "state", "fest", "north")
    assert path.name == "fest.north-manual.json"
    tally = ManualTally("fest", "north", state_dir=tmp_path / "state", clock=lambda: T)
    assert tally.state == TallyState()
    assert not tally.state.in_use
    link = MemoryLink()
    tally.attach(link)
    assert link.drain()[0].payload == b"online"  # announced, but no count before one is made
    tally.count(entered=1)
    (first,) = readings(link)
    assert first == {
        "seq": 1,
        "ts": "2027-07-04T18:03:05.000+00:00",
        "in_total": 1,
        "out_total": 0,
    }
    tally.count(entered=1)
    tally.count(exited=1)
    # The sensors' state file: the device's id, then seq and totals.
    assert json.loads(path.read_text()) == {
        "sensor": "north-manual",
        "seq": 3,
        "in_total": 2,
        "out_total": 1,
    }
    again = ManualTally("fest", "north", state_dir=tmp_path / "state", clock=lambda: T)
    assert again.state == TallyState(3, 2, 1, unsent=True)  # the tablet rebooted
    link = MemoryLink()
    again.attach(link)  # on connecting it repeats its totals with the next seq
    (beat,) = readings(link)
    assert (beat["seq"], beat["in_total"], beat["out_total"]) == (4, 2, 1)
    assert not again.state.unsent
    with pytest.raises(ValueError, match="negative"):
        again.count(entered=-1)


def test_counts_made_offline_wait_for_the_broker(tmp_path: Path) -> None:
    tally = ManualTally("fest", "north", state_dir=tmp_path, clock=lambda: T)
    link = MemoryLink()
    tally.attach(link)
    link.set_online(False)
    tally.count(entered=1)
    tally.count(entered=1)
    assert tally.state == TallyState(0, 2, 0, unsent=True)
    assert tally.state.in_use
    link.set_online(True)
    (latest,) = readings(link)
    assert (latest["seq"], latest["in_total"]) == (1, 2)
    assert not tally.state.unsent


def test_an_unreadable_tally_file_is_kept_aside_and_counting_restarts(tmp_path: Path) -> None:
    path = tally_path(tmp_path, "fest", "north")
    path.write_text("{not json")
    tally = ManualTally("fest", "north", state_dir=tmp_path)
    assert tally.state == TallyState()
    assert tally.recovered_from is not None
    assert tally.recovered_from.read_text() == "{not json"
    assert not path.exists()


def test_payload_fields_are_in_the_devices_order(tmp_path: Path) -> None:
    tally = ManualTally("fest", "north", state_dir=tmp_path, clock=lambda: T)
    link = MemoryLink()
    tally.attach(link)
    tally.count(entered=1)
    (payload,) = readings(link)
    assert list(payload) == ["seq", "ts", "in_total", "out_total"]
    assert manual_gate("north") == "north-manual"


def test_the_terminals_sign_has_the_cores_colours() -> None:
    """The phone's page takes the sign's colour from the core's view; the terminal's
    stylesheet must say the same, so a deputy sees one green and one red everywhere."""
    sheet = (Path(__file__).resolve().parents[2] / "dashboards" / "gate" / "gate.tcss").read_text()
    for tone, klass in (("admit", "-admit"), ("hold", "-hold")):
        rule = sheet.split(f"#order.{klass} {{", 1)[1].split("}", 1)[0]
        assert f"background: {ORDER_COLOURS[tone]};" in rule


async def test_a_long_hold_reason_wraps_whole_at_80_columns(tmp_path: Path) -> None:
    """A deputy reads the whole reason, however long: it wraps, it is never cut."""
    import msgspec

    from dashboards.common.clock import fixed_clock
    from dashboards.gate.app import make_gate_app

    reason = (
        "HOLD: a permit for 500 or fewer persons covers no assembly over 500: admit no one "
        "(permit:A)"
    )
    command = msgspec.structs.replace(samples.command(admit=False), reason=reason)
    app = make_gate_app(
        "north",
        samples.EVENT,
        None,
        state_dir=tmp_path,
        clock=fixed_clock(samples.NOW),
        statuses=[samples.status(admit=False)],
        command=command,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        details = app.screen.query_one("#order-details")
        shown = " ".join(
            line.text.strip() for line in details.render_lines(details.region.reset_offset)
        )
        words = " ".join(shown.split())
        assert "admit no one (permit:A)" in words
        assert "covers no assembly over 500" in words
