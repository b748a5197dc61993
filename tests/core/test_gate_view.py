"""What a gate view shows, decided once for the terminal and the phone: pure functions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from kent_ops.broker.refusal import refusal
from kent_ops.core import wire
from kent_ops.core.connection import ConnectionState, connection_problem
from kent_ops.core.gate_view import (
    ORDER_COLOURS,
    TallyFacts,
    counted_taps,
    deputy_gate_problem,
    gate_view,
    tally_lines,
    tap_counted,
    view_data,
)

NOW = datetime(2027, 7, 4, 18, 3, 7, tzinfo=UTC)


def status(*, admit: bool = True, current: int = 3120, tally: bool = True) -> wire.Status:
    gates = {
        "north": wire.GateState(in_=2210, out=640, net=1570, per_minute=14.0, last_seen=NOW),
        "south": wire.GateState(
            in_=5, out=0, net=5, online=False, last_seen=NOW - timedelta(seconds=62)
        ),
    }
    if tally:
        gates["north-manual"] = wire.GateState(in_=12, out=0, net=12, manual=True, last_seen=NOW)
    return wire.Status(
        ts=NOW - timedelta(seconds=2),
        event="fest",
        event_name="Kent Summer Music Festival",
        timezone="America/New_York",
        attendance=wire.Attendance(current=current),
        admit=admit,
        gates=gates,
    )


def command(admit: bool) -> wire.GateCommand:
    return wire.GateCommand(
        admit=admit,
        attendance=4010,
        hold_at=4000,
        resume_below=3960,
        reason="attendance at hold_at",
    )


def up() -> ConnectionState:
    return ConnectionState(link="up", status_ts=NOW, aggregator_online=True, up_at=0.0)


def view(gate: str = "north", **changes: object):  # type: ignore[no-untyped-def]
    values: dict[str, object] = {
        "status": status(),
        "command": command(False),
        "connection": up(),
        "now": NOW,
        "monotonic": 100.0,
        "tally": TallyFacts(),
    }
    values.update(changes)
    return gate_view(gate, "fest", **values)  # type: ignore[arg-type]


def text(line: tuple) -> str:  # type: ignore[type-arg]
    return "".join(span.text for span in line)


def test_the_command_decides_the_word_and_its_colour() -> None:
    hold = view()
    assert (hold.word, hold.tone, hold.colour) == ("HOLD", "hold", ORDER_COLOURS["hold"])
    admit = view(command=command(True))
    assert (admit.word, admit.colour) == ("ADMIT", ORDER_COLOURS["admit"])
    nothing = view(command=None, status=None)
    assert (nothing.word, nothing.tone) == ("NO ORDER", "none")
    assert nothing.can_count is None  # no status: not known whether the gate has a tally


def test_attendance_is_a_chip_past_hold_at_and_the_reason_follows() -> None:
    past = view(status=status(current=4100))
    first, reason = past.details
    assert text(first) == "Attendance 4,100 · hold at 4,000 · admit again below 3,960"
    assert [s.tag for s in first if s.text == "4,100"] == ["chip-breach"]
    assert text(reason) == "attendance at hold_at"
    near = view(status=status(current=3700))
    assert [s.tag for s in near.details[0] if s.text == "3,700"] == ["chip-near"]


def test_the_counts_say_when_the_gates_counter_is_down() -> None:
    assert "in 2,210  out 640  net 1,570  14/min  ● online" in text(view().counts)
    assert "COUNTER OFFLINE (last seen 1 min ago)" in text(view("south").counts)


def test_a_gate_without_a_tally_in_the_permit_cannot_count() -> None:
    assert view().can_count is True
    south = view("south")
    assert south.can_count is False
    assert "south-manual is not a gate in the permit" in text(south.tally[-1])
    assert view(status=status(tally=False)).can_count is False


def test_the_tallys_number_counts_taps_not_messages() -> None:
    three = TallyFacts(in_total=2, out_total=1, sent=3)
    first = tally_lines(three, status(), "north")[0]
    assert text(first).endswith("  #3 counted")  # the aggregator has 12: it reaches 3
    assert "not used yet" in text(tally_lines(TallyFacts(), status(), "north")[0])


def fate(facts: TallyFacts, counted: int | None) -> str:
    """The tally's first line beside a status whose north-manual counted ``counted``."""
    s = status(tally=counted is not None)
    if counted is not None:
        s.gates["north-manual"] = wire.GateState(in_=counted, manual=True, last_seen=NOW)
    return text(tally_lines(facts, s, "north")[0])


def test_a_tap_is_sent_when_the_broker_has_it_and_counted_only_when_the_status_says() -> None:
    assert fate(TallyFacts(in_total=5, sent=4), 3).endswith(
        "#5 not yet sent: waiting for the broker"
    )
    assert fate(TallyFacts(in_total=5, sent=5, waiting_s=1.0), 4).endswith(
        "#5 sent, not yet counted"
    )
    assert fate(TallyFacts(in_total=5, sent=5), 5).endswith("#5 counted")
    no_status = tally_lines(TallyFacts(in_total=5, sent=5, waiting_s=2.0), None, "north")[0]
    assert text(no_status).endswith("#5 sent, not yet counted")  # no status: none counted
    kept = tally_lines(TallyFacts(in_total=1, sent=0), None, "north")[0]
    assert text(kept).endswith("#1 not yet sent: waiting for the aggregator's first status")
    # The aggregator's totals reach it, but the broker does not have the last tap yet
    # (a tally that started again from nothing): not counted yet.
    assert fate(TallyFacts(in_total=5, sent=4), 40).endswith(
        "#5 not yet sent: waiting for the broker"
    )


@pytest.mark.parametrize(("waiting_s", "says"), [
    (14.9, "#5 sent, not yet counted"),
    (15.0, "#5 not counted by the aggregator: tell the command post"),
])  # fmt: skip
def test_a_tap_not_counted_15_s_after_it_was_sent_says_so_in_words(
    waiting_s: float, says: str
) -> None:
    s = status()
    s.gates["north-manual"] = wire.GateState(in_=4, manual=True, last_seen=NOW)
    line = tally_lines(TallyFacts(in_total=5, sent=5, waiting_s=waiting_s), s, "north")[0]
    assert text(line).endswith(says)
    assert "✓" not in text(line)
    late = [span for span in line if "tell the command post" in span.text]
    assert [span.tag for span in late] == (["alarm"] if waiting_s >= 15 else [])


def test_no_aggregator_on_the_broker_and_no_broker_are_said() -> None:
    unheard = TallyFacts(in_total=1, sent=1, unheard=True)
    assert fate(unheard, 0).endswith("#1 not counted: no aggregator for this event on the broker")
    assert fate(TallyFacts(in_total=1), 0).endswith("#1 not sent: no broker")


def test_counted_taps_are_the_tallys_totals_in_the_status() -> None:
    assert counted_taps(status(), "north") == 12
    assert counted_taps(status(tally=False), "north") is None
    assert counted_taps(None, "north") is None
    assert tap_counted(12, sent=12, counted=12)
    assert not tap_counted(13, sent=13, counted=12)
    assert not tap_counted(12, sent=11, counted=12)
    assert tap_counted(3, sent=None, counted=12)  # no broker: the status alone says


def test_a_refused_account_is_named_and_not_called_unreachable() -> None:
    sentence = refusal(135, "deputy-south")
    assert sentence.startswith("not authorised as deputy-south")
    state = ConnectionState(link="down", reason=sentence, refused=True)
    problem = connection_problem(state, NOW, UTC)
    assert problem is not None
    assert "not authorised as deputy-south" in problem
    assert "unreachable" not in problem
    down = connection_problem(ConnectionState(link="down"), NOW, UTC)
    assert down is not None
    assert down.startswith("Broker unreachable")


def test_a_broker_host_name_that_does_not_exist_is_said_so_not_unreachable() -> None:
    state = ConnectionState(
        link="down", reason="the broker's host name 'brokr' was not found", unknown_host=True,
        broker_url="mqtt://brokr:1883",
    )  # fmt: skip
    assert connection_problem(state, NOW, UTC) == (
        "The broker's host name 'brokr' was not found: check the broker's address; "
        "showing no figures yet"
    )


def test_staleness_comes_through_the_view() -> None:
    old = ConnectionState(link="up", status_ts=NOW - timedelta(seconds=40), aggregator_online=True)
    stale = view(connection=old)
    assert stale.problem is not None
    assert stale.problem.startswith("No status for 40 s")
    assert view().problem is None


def test_the_view_is_json_for_the_page() -> None:
    data = json.loads(msgspec.json.encode(view_data(view())))
    assert data["word"] == "HOLD"
    assert data["colour"] == ORDER_COLOURS["hold"]
    assert data["details"][0][1] == ["3,120", "chip"]
    assert data["can_count"] is True
    assert data["header"][1] == ["  Gate north", "strong"]


@pytest.mark.parametrize(
    ("gate", "says"),
    [
        ("north", None),
        ("nrth", "gate 'nrth' is not in the permit MG-1 (its gates: north, south)"),
        ("north-manual", "north-manual is a manual tally, not a gate"),
    ],
)
def test_which_gates_a_deputy_may_stand_at(gate: str, says: str | None) -> None:
    gates = {"north": False, "south": False, "north-manual": True}
    problem = deputy_gate_problem(gate, gates, "the permit MG-1")
    assert problem == says if says is None else problem is not None and problem.startswith(says)


def test_the_view_names_the_events_zone_for_the_phones_own_times() -> None:
    assert view().timezone == "America/New_York"
    assert view(status=None).timezone == "UTC"


def test_a_gate_the_permit_does_not_have_is_said_to_be_so() -> None:
    unknown = view("nrth", command=None)
    assert unknown.problem == "Gate nrth is not in the permit: no order will come for it"
    assert view("north").problem is None


# -- one clock: a simulation's time, a finished day, a silent aggregator ------------------


def _simulated(received_mono: float) -> ConnectionState:
    return ConnectionState(
        link="up",
        aggregator_online=True,
        status_ts=datetime(2027, 7, 4, 3, 29, 59, tzinfo=UTC),  # the simulated day's end
        received_at=datetime(2027, 7, 4, 3, 29, 59, tzinfo=UTC),
        received_mono=received_mono,
        simulated=True,
    )


def test_a_simulated_day_that_ended_is_no_outage_while_statuses_arrive() -> None:
    """The demo's clock stops with its day; the aggregator's statuses still come."""
    wall_now = datetime(2026, 12, 1, 16, 0, tzinfo=UTC)  # months from the simulated time
    assert connection_problem(_simulated(1000.0), wall_now, UTC, monotonic=1004.0) is None


def test_a_silent_aggregator_on_a_simulated_clock_is_stale_in_real_seconds() -> None:
    wall_now = datetime(2026, 12, 1, 16, 0, tzinfo=UTC)
    problem = connection_problem(_simulated(1000.0), wall_now, UTC, monotonic=1020.0)
    assert problem is not None
    assert problem.startswith("No status for 20 s")


def test_an_unreachable_broker_is_named_with_its_address() -> None:
    state = ConnectionState(link="down", broker_url="mqtt://127.0.0.1:1884")
    problem = connection_problem(state, datetime(2027, 7, 4, tzinfo=UTC), UTC)
    assert problem is not None
    assert problem.startswith("Broker unreachable at mqtt://127.0.0.1:1884")
