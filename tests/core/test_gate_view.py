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
    deputy_gate_problem,
    gate_view,
    tally_lines,
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
    assert text(first) == "Attendance 4,100 of 4,000 (hold at) · admit again below 3,960"
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
    three = TallyFacts(in_total=2, out_total=1, delivered=True)
    first = tally_lines(three, status(), "north")[0]
    assert "#3 delivered ✓" in text(first)
    assert "not used yet" in text(tally_lines(TallyFacts(), status(), "north")[0])
    waiting = TallyFacts(in_total=1, delivered=False)
    assert "#1 waiting for the broker" in text(tally_lines(waiting, status(), "north")[0])
    unheard = TallyFacts(in_total=1, delivered=True, unheard=True)
    assert "NOT DELIVERED: no aggregator" in text(tally_lines(unheard, status(), "north")[0])


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
