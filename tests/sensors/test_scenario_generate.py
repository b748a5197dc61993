"""The generator: deterministic, in time order, and each scenario does what it was built for.

Figures are checked with the reference :class:`~sensors.tally.Tally` and the ordinance
helpers, not with the engine, so a scenario that stopped breaching (or started to) shows
up here whatever the engine does.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from wire_support import gate_count

from kent_ops.core.ordinance import car_spaces_required, nurses_required
from kent_ops.core.permit import Permit, load_permit, parse_permit
from kent_ops.core.wire import Topics, unsign
from sensors.scenario import SimMessage, generate, timeline
from sensors.scenario.file import load_scenario, parse_scenario
from sensors.scenario.model import BUILTIN_SCENARIOS
from sensors.tally import Tally, expected_totals

EXAMPLE_PERMIT = Path(__file__).resolve().parents[2] / "examples" / "permit.toml"


@pytest.fixture(scope="module")
def permit() -> Permit:
    return load_permit(EXAMPLE_PERMIT)


@pytest.fixture(scope="module")
def festival(permit: Permit) -> list[SimMessage]:
    return list(generate(permit, "festival", seed=1))


@pytest.fixture(scope="module")
def faults(permit: Permit) -> list[SimMessage]:
    return list(generate(permit, "faults", seed=1))


def small_permit() -> Permit:
    """One counted gate, one lot, a limit of 1,000: scenarios must fit it too."""
    text = EXAMPLE_PERMIT.read_text()
    for old, new in (
        ("max_at_one_time = 4000", "max_at_one_time = 1000"),
        ("max_collective = 9000", "max_collective = 3000"),
        ("hold_at = 4000", "hold_at = 1000"),
        ("resume_below = 3960", "resume_below = 990"),
        ('[[gates]]\nid = "south"\n', ""),
        ('[[lots]]\nid = "lot-b"\ncapacity = 450\n', ""),
        ("capacity = 600", "capacity = 300"),
    ):
        assert old in text
        text = text.replace(old, new)
    return parse_permit(text)


def replay(permit: Permit, messages: Iterable[SimMessage]) -> Iterable[tuple[SimMessage, Tally]]:
    """Each message with the reference tally just after it."""
    tally = Tally(permit)
    for m in messages:
        tally.feed(m.topic, m.payload)
        yield m, tally


def longest_run(permit: Permit, messages: list[SimMessage], condition) -> timedelta:  # noqa: ANN001
    """The longest stretch of simulated time over which ``condition(tally)`` held."""
    best = timedelta(0)
    since: datetime | None = None
    for m, tally in replay(permit, messages):
        if condition(tally):
            since = since or m.at
            best = max(best, m.at - since)
        else:
            since = None
    return best


def test_the_same_seed_gives_the_same_messages(permit: Permit) -> None:
    first = list(generate(permit, "faults", seed=7))
    assert first == list(generate(permit, "faults", seed=7))
    assert first != list(generate(permit, "faults", seed=8))


def test_messages_come_in_time_order_stamped_with_their_simulated_time(
    festival: list[SimMessage],
) -> None:
    ats = [m.at for m in festival]
    assert ats == sorted(ats)
    assert all(at.tzinfo is not None for at in ats)
    for m in festival:
        if m.topic.endswith("/availability"):
            assert m.payload in (b"online", b"offline")
            assert m.retain
            continue
        payload = json.loads(m.payload)
        assert datetime.fromisoformat(payload["ts"]) == m.at
        assert payload["ts"].endswith("-04:00")  # the event's zone, with its offset


def test_gate_counters_and_lot_sensors_speak_at_least_every_30_s(
    permit: Permit, festival: list[SimMessage]
) -> None:
    last: dict[str, datetime] = {}
    gaps: dict[str, float] = defaultdict(float)
    for m in festival:
        if m.topic.endswith(("/count", "/occupancy")):
            if m.topic in last:
                gaps[m.topic] = max(gaps[m.topic], (m.at - last[m.topic]).total_seconds())
            last[m.topic] = m.at
    automatic = set(permit.gates) - permit.manual_gates
    assert len(gaps) == len(automatic) + len(permit.lots)
    assert max(gaps.values()) <= 30.0


def test_seq_rises_by_one_per_message_of_each_device(festival: list[SimMessage]) -> None:
    seqs: dict[str, list[int]] = defaultdict(list)  # by device: a reader's roster shares it
    for m in festival:
        if not m.topic.endswith("/availability"):
            seqs[m.topic.split("/")[3]].append(json.loads(m.payload)["seq"])
    for device_seqs in seqs.values():
        assert device_seqs == list(range(1, len(device_seqs) + 1))


def test_festival_stays_inside_the_window_and_everyone_goes_home(
    permit: Permit, festival: list[SimMessage]
) -> None:
    window = permit.windows[0]
    assert festival[0].at == window.start - timedelta(minutes=15)  # setup
    # The day's last report: every counter and lot sensor, at the window's end instant, so
    # the evidence log covers the whole permitted window (no "record incomplete").
    last = [m for m in festival if m.at == window.end]
    assert {m.topic.split("/")[3] for m in last} == {*permit.gates, *permit.lots} - set(
        permit.manual_gates
    )
    assert festival[-1].at == window.end
    for m, tally in replay(permit, festival):
        if tally.attendance > 0:
            assert window.contains(m.at)
    assert expected_totals(festival, permit)["attendance"] == 0


def test_festival_surges_past_the_maximum_for_minutes(
    permit: Permit, festival: list[SimMessage]
) -> None:
    over = longest_run(permit, festival, lambda t: t.attendance > permit.max_at_one_time)
    assert over >= timedelta(minutes=10)
    assert over.total_seconds() > permit.alerting.pending_s
    peak_at = max(replay(permit, festival), key=lambda mt: mt[1].attendance)[0].at
    local = peak_at.astimezone(permit.timezone)
    assert 14 <= local.hour < 18  # a mid-afternoon peak


def test_festival_nurse_shift_change_leaves_a_gap_that_breaches_the_ratio(
    permit: Permit, festival: list[SimMessage]
) -> None:
    def short(t: Tally) -> bool:
        return t.staff("nurse") < nurses_required(t.attendance, permit.persons_per_nurse)

    gap = longest_run(permit, festival, short)
    assert gap >= timedelta(minutes=20) + timedelta(seconds=permit.alerting.pending_s)
    doctors_short = longest_run(
        permit, festival, lambda t: t.attendance > 0 and t.staff("doctor") < permit.doctors_min
    )
    assert doctors_short == timedelta(0)  # the doctors' shifts overlap


def test_festival_cars_arrive_ahead_of_their_passengers(
    permit: Permit, festival: list[SimMessage]
) -> None:
    first_car = next(m.at for m, t in replay(permit, festival) if t.cars > 0)
    first_person = next(m.at for m, t in replay(permit, festival) if t.attendance > 0)
    assert first_car < first_person
    capacity = permit.spaces_provided
    for _, t in replay(permit, festival):
        assert all(t.lots[lot] <= cap for lot, cap in permit.lots.items() if lot in t.lots)
        if t.attendance > 600 and t.cars < 0.9 * capacity and t.entries == t.attendance:
            assert 0.28 <= t.cars / t.attendance <= 0.45  # about one car per 3 persons


def test_quiet_stays_under_every_limit_the_permit_sets(permit: Permit) -> None:
    messages = list(generate(permit, "quiet", seed=3))
    peak = 0
    for m, t in replay(permit, messages):
        a = t.attendance
        peak = max(peak, a)
        assert a <= permit.max_at_one_time
        assert t.entries <= permit.max_collective
        assert car_spaces_required(a) <= permit.spaces_provided
        assert t.staff("nurse") >= nurses_required(a, permit.persons_per_nurse)
        if a > 0:
            assert t.staff("doctor") >= permit.doctors_min
        if permit.inside_window(m.at):
            assert t.staff("security") >= permit.security_guards
        assert t.cars <= permit.vehicles_at_one_time
        assert all(t.lots.get(lot, 0) < 0.95 * cap for lot, cap in permit.lots.items())
        assert m.fault is None
    assert peak > 500  # still a gathering that needs its permit
    assert t.rejected == 0


def test_faults_holds_a_restart_an_outage_duplicates_and_malformed_messages(
    permit: Permit, faults: list[SimMessage]
) -> None:
    kinds = {m.fault for m in faults} - {None}
    assert kinds == {
        "restart", "offline", "reconnect", "duplicate",
        "bad-json", "negative-count", "wrong-type", "unknown-sensor", "oversize",
    }  # fmt: skip
    tally = Tally(permit)
    outcomes: dict[str, set[str]] = defaultdict(set)
    for m in faults:
        outcomes[m.fault or ""].add(tally.feed(m.topic, m.payload))
    assert outcomes["duplicate"] == {"duplicate"}
    assert "restart" in outcomes["restart"]
    for bad in ("bad-json", "negative-count", "wrong-type", "unknown-sensor", "oversize"):
        assert outcomes[bad] == {"rejected"}
    assert tally.restarts == 1
    assert tally.rejected == 5


def test_the_restarted_counter_starts_again_at_seq_one_with_lower_totals(
    faults: list[SimMessage],
) -> None:
    restart = next(m for m in faults if m.fault == "restart" and m.topic.endswith("/count"))
    before = [
        json.loads(m.payload) for m in faults if m.topic == restart.topic and m.at < restart.at
    ]
    after = json.loads(restart.payload)
    assert after["seq"] == 1
    assert after["in_total"] < before[-1]["in_total"]


def test_the_offline_gate_goes_silent_for_ten_minutes(faults: list[SimMessage]) -> None:
    gone = next(m for m in faults if m.fault == "offline")
    assert gone.payload == b"offline"
    assert gone.retain
    gate = gone.topic.split("/")[3]
    back = next(m for m in faults if m.fault == "reconnect")
    assert back.at - gone.at == timedelta(minutes=10)
    silent = [m for m in faults if f"/{gate}/" in m.topic and gone.at < m.at < back.at]
    assert silent == []
    caught_up = [m for m in faults if m.fault == "reconnect"]
    assert [m.payload for m in caught_up][0] == b"online"
    latest = json.loads(caught_up[1].payload)
    earlier = [json.loads(m.payload) for m in faults if m.topic == caught_up[1].topic]
    assert latest["in_total"] > earlier[earlier.index(latest) - 1]["in_total"]  # kept counting


def test_faults_change_no_figure_once_stitched(permit: Permit, faults: list[SimMessage]) -> None:
    clean = dataclasses.replace(load_scenario("faults"), faults=())
    without = list(generate(permit, clean, seed=1))
    assert expected_totals(faults, permit) == expected_totals(without, permit)
    assert expected_totals(faults, permit)["entries"] > 1000


def test_expected_totals_stitch_restarts_and_ignore_repeats(permit: Permit) -> None:
    def gate(seq: int, in_total: int, out_total: int, gate: str = "north") -> SimMessage:
        payload = gate_count(seq, "2027-07-04T12:00:00-04:00", in_total, out_total)
        return SimMessage(permit.windows[0].start, Topics(permit.event_id).gate_count(gate),
                          payload, False)  # fmt: skip

    messages = [
        gate(1, 10, 0),
        gate(2, 50, 5),
        gate(2, 50, 5),  # a redelivery
        gate(1, 60, 5),  # an older seq, totals not lower: ignored
        gate(3, 49, 5),  # totals fell while seq rose: a restart that kept it, 50/5 kept
        gate(1, 3, 1),  # restart: 99/10 kept, 3/1 added
        gate(2, 7, 1),
        gate(1, 20, 2, gate="south"),
        gate(1, 99, 0, gate="east"),  # not in the permit
    ]
    assert expected_totals(messages, permit) == {"attendance": 113, "entries": 126, "exits": 13}


def test_duration_cuts_the_run_and_start_moves_it(permit: Permit) -> None:
    full = list(generate(permit, "quiet", seed=2))
    short = list(generate(permit, "quiet", seed=2, duration=600))
    assert short == full[: len(short)]
    assert short[-1].at < full[0].at + timedelta(seconds=600) <= full[len(short)].at
    start = datetime.fromisoformat("2027-08-01T18:00:00+00:00")
    moved = list(generate(permit, "quiet", seed=2, start=start, duration=60))
    assert moved[0].at == start - timedelta(minutes=15)
    tl = timeline(permit, load_scenario("quiet"), start)
    assert (tl.zero, tl.end - tl.zero) == (start, timedelta(hours=4))


def test_payloads_are_signed_when_keys_are_given(permit: Permit) -> None:
    keys = {sensor: bytes([i + 1]) * 16 for i, sensor in enumerate(permit.sensors)}
    messages = list(generate(permit, "quiet", seed=1, duration=900, keys=keys))
    readings = [m for m in messages if not m.topic.endswith("/availability")]
    assert {m.topic.split("/")[3] for m in readings} == set(permit.sensors) - permit.manual_gates
    for m in readings:
        assert isinstance(unsign(m.payload, keys[m.topic.split("/")[3]]), bytes)
    unsigned = next(generate(permit, "quiet", seed=1, duration=900, keys={}))
    assert b"sig" not in unsigned.payload


def test_scenarios_fit_a_smaller_permit() -> None:
    small = small_permit()
    festival = list(generate(small, "festival", seed=1))
    gates = {m.topic.split("/")[3] for m in festival if m.topic.endswith("/count")}
    assert set(small.gates) == {"north", "north-manual"}
    assert gates == {"north"}  # the manual tally is the deputy's
    over = longest_run(small, festival, lambda t: t.attendance > small.max_at_one_time)
    assert over >= timedelta(minutes=10)
    quiet = list(generate(small, "quiet", seed=1))
    for _, t in replay(small, quiet):
        assert t.attendance <= small.max_at_one_time
        assert t.staff("nurse") >= nurses_required(t.attendance, small.persons_per_nurse)
        assert car_spaces_required(t.attendance) <= small.spaces_provided


def test_a_town_scenario_file_generates(permit: Permit) -> None:
    path = EXAMPLE_PERMIT.parent / "scenario.toml"
    messages = list(generate(permit, path, seed=1))
    totals = expected_totals(messages, permit)
    assert totals["attendance"] == 0
    assert totals["entries"] > 1000
    assert any(m.fault == "offline" for m in messages)


def sensors_heard(messages: Iterable[SimMessage], permit: Permit) -> set[str]:
    """Every sensor id a message is about, read back through the wire contract."""
    topics = Topics(permit.event_id)
    return {ref.id for m in messages if (ref := topics.parse(m.topic)) is not None}


@pytest.mark.parametrize("scenario", [*BUILTIN_SCENARIOS, "example"])
def test_no_scenario_publishes_on_a_manual_tally_gate(permit: Permit, scenario: str) -> None:
    """The deputy's tally is theirs: a simulator on it would collide with them in the demo."""
    name = EXAMPLE_PERMIT.parent / "scenario.toml" if scenario == "example" else scenario
    messages = list(generate(permit, name, seed=1))
    heard = sensors_heard(messages, permit)
    assert permit.manual_gates == {"north-manual"}
    assert "north-manual" not in heard
    assert {"north", "south"} <= heard


def test_a_gate_declared_manual_is_left_to_its_deputy_too() -> None:
    text = EXAMPLE_PERMIT.read_text().replace('id = "south"\n', 'id = "south"\nmanual = true\n')
    permit = parse_permit(text)
    assert permit.manual_gates == {"south", "north-manual"}
    faults = list(generate(permit, "faults", seed=1))
    assert sensors_heard(faults, permit) & permit.manual_gates == set()
    # The outage the scenario puts on gate 2 falls on the second automatic gate, north
    # wrapping around: the manual gates are not counted among them.
    [gone] = [m for m in faults if m.fault == "offline"]
    assert gone.topic == Topics(permit.event_id).availability("north")


def test_old_scenario_files_with_a_manual_share_still_load_and_it_changes_nothing(
    permit: Permit,
) -> None:
    text = (EXAMPLE_PERMIT.parent / "scenario.toml").read_text()
    old = text.replace("[crowd]\n", "[crowd]\nmanual_share = 0.3\n", 1)
    weighted = old.replace(
        "{ north = 2, south = 1 }", '{ north = 2, south = 1, "north-manual" = 9 }'
    )
    assert old != text
    assert weighted != old
    now = list(generate(permit, parse_scenario(text, "scenario.toml"), seed=1))
    assert list(generate(permit, parse_scenario(old, "scenario.toml"), seed=1)) == now
    assert list(generate(permit, parse_scenario(weighted, "scenario.toml"), seed=1)) == now


def test_a_fault_aimed_at_a_manual_gate_is_left_out(permit: Permit) -> None:
    faults = load_scenario("faults")
    aimed = dataclasses.replace(
        faults, faults=tuple(dataclasses.replace(f, gate="north-manual") for f in faults.faults)
    )
    messages = list(generate(permit, aimed, seed=1))
    assert {m.fault for m in messages} == {None}
    clean = dataclasses.replace(faults, faults=())
    assert messages == list(generate(permit, clean, seed=1))
