"""Device behaviour without a broker: seq, totals, heartbeats, state, the offline buffer.

Devices run on a :class:`MemoryLink` and a clock the test moves, so every payload and
every instant is one the test can name.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kent_ops.core.wire import Topics, verify
from sensors import badge_reader, gate_counter, lot_sensor
from sensors.badge_reader import BadgeReader
from sensors.device import MemoryLink, Sent
from sensors.gate_counter import GateCounter
from sensors.lot_sensor import LotSensor

EVENT = "kent-summer-fest-2027"
NY = ZoneInfo("America/New_York")
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
TOPICS = Topics(EVENT)
GATE_TOPIC = TOPICS.gate_count("north")
AVAIL = TOPICS.availability("north")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def readings(sent: list[Sent]) -> list[dict[str, Any]]:
    return [json.loads(s.payload) for s in sent if not s.topic.endswith("/availability")]


def attached(device: GateCounter | LotSensor | BadgeReader) -> MemoryLink:
    link = MemoryLink(will_topic=device.availability_topic)
    device.attach(link)
    return link


def test_a_fresh_counter_announces_itself_then_counts_with_rising_seq() -> None:
    clock = Clock()
    counter = GateCounter(EVENT, "north", clock=clock, tz=NY)
    link = attached(counter)
    clock.advance(1.5)
    counter.count(entered=2)
    counter.count(entered=3, exited=1)
    sent = link.drain()
    assert sent[0] == Sent(AVAIL, b"online", True)
    assert all(s.topic == GATE_TOPIC and not s.retain for s in sent[1:])
    first, second, third = readings(sent)
    ts0, ts1 = "2027-07-04T10:00:00.000-04:00", "2027-07-04T10:00:01.500-04:00"
    assert first == {"seq": 1, "ts": ts0, "in_total": 0, "out_total": 0}
    assert second == {"seq": 2, "ts": ts1, "in_total": 2, "out_total": 0}
    assert list(third) == ["seq", "ts", "in_total", "out_total"]
    assert (third["seq"], third["in_total"], third["out_total"]) == (3, 5, 1)


def test_heartbeat_repeats_the_totals_after_thirty_seconds_of_silence() -> None:
    clock = Clock()
    counter = GateCounter(EVENT, "north", clock=clock)
    link = attached(counter)
    counter.count(entered=4)
    link.drain()
    clock.advance(29.9)
    assert counter.tick() is False
    clock.advance(0.1)
    assert counter.tick() is True
    assert counter.tick() is False  # not again until another 30 s
    [beat] = readings(link.drain())
    assert (beat["seq"], beat["in_total"], beat["out_total"]) == (3, 4, 0)


def test_heartbeat_interval_is_configurable() -> None:
    clock = Clock()
    counter = GateCounter(EVENT, "north", clock=clock, heartbeat_s=5)
    link = attached(counter)
    link.drain()
    clock.advance(5)
    assert counter.tick() is True
    with pytest.raises(ValueError, match="heartbeat"):
        GateCounter(EVENT, "south", heartbeat_s=0)


def test_counts_while_the_broker_is_away_and_sends_the_latest_totals_once_back() -> None:
    clock = Clock()
    counter = GateCounter(EVENT, "north", clock=clock)
    link = attached(counter)
    counter.count(entered=10)
    link.drain()
    link.set_online(False)  # the broker publishes the will
    assert link.drain() == [Sent(AVAIL, b"offline", True)]
    for _ in range(5):
        clock.advance(20)
        assert counter.count(entered=2, exited=1) is False
        assert counter.tick() is False
    assert link.drain() == []
    clock.advance(1)
    link.set_online(True)
    sent = link.drain()
    assert sent[0] == Sent(AVAIL, b"online", True)
    [latest] = readings(sent)
    assert (latest["seq"], latest["in_total"], latest["out_total"]) == (3, 20, 5)
    assert latest["ts"] == "2027-07-04T14:01:41.000+00:00"


def test_state_file_carries_seq_and_totals_across_a_reboot(tmp_path: Path) -> None:
    state = tmp_path / "north.json"
    first = GateCounter(EVENT, "north", state_file=state)
    attached(first)
    first.count(entered=7, exited=2)
    assert json.loads(state.read_text()) == {
        "sensor": "north", "seq": 2, "in_total": 7, "out_total": 2
    }  # fmt: skip
    rebooted = GateCounter(EVENT, "north", state_file=state)
    link = attached(rebooted)
    [hello] = readings(link.drain())
    assert (hello["seq"], hello["in_total"], hello["out_total"]) == (3, 7, 2)


def test_counts_made_offline_are_saved_before_they_are_sent(tmp_path: Path) -> None:
    state = tmp_path / "north.json"
    counter = GateCounter(EVENT, "north", state_file=state)
    counter.count(entered=3)  # never attached: nothing sent, nothing lost
    assert json.loads(state.read_text())["in_total"] == 3
    assert GateCounter(EVENT, "north", state_file=state).in_total == 3


def test_a_fresh_device_starts_at_seq_one_with_zero_totals(tmp_path: Path) -> None:
    counter = GateCounter(EVENT, "north", state_file=tmp_path / "absent.json")
    link = attached(counter)
    [hello] = readings(link.drain())
    assert (hello["seq"], hello["in_total"], hello["out_total"]) == (1, 0, 0)


def test_a_state_file_of_another_sensor_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    GateCounter(EVENT, "north", state_file=state).count(entered=1)
    with pytest.raises(ValueError, match="another sensor"):
        GateCounter(EVENT, "south", state_file=state)
    state.write_text("{not json")
    with pytest.raises(ValueError, match="unreadable"):
        GateCounter(EVENT, "north", state_file=state)


def test_power_cycle_restarts_seq_at_one_with_lower_totals() -> None:
    counter = GateCounter(EVENT, "north")
    link = attached(counter)
    counter.count(entered=50, exited=5)
    counter.power_cycle()
    counter.count(entered=1)
    *_, after = readings(link.drain())
    assert (after["seq"], after["in_total"], after["out_total"]) == (1, 1, 0)


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        GateCounter(EVENT, "north").count(entered=-1)


def test_close_says_offline_retained() -> None:
    counter = GateCounter(EVENT, "north")
    link = attached(counter)
    counter.close()
    assert link.drain()[-1] == Sent(AVAIL, b"offline", True)


def test_signed_payloads_verify_under_the_device_key() -> None:
    key = bytes(range(16))
    counter = GateCounter(EVENT, "north", key=key)
    link = attached(counter)
    counter.count(entered=1)
    payloads = [s.payload for s in link.drain() if s.topic == GATE_TOPIC]
    assert len(payloads) == 2
    assert all(verify(p, key) for p in payloads)


def test_lot_sensor_reports_cars_and_never_goes_below_zero() -> None:
    clock = Clock()
    lot = LotSensor(EVENT, "lot-a", clock=clock)
    link = attached(lot)
    lot.set_occupied(312)
    lot.arrive()
    lot.leave(400)
    clock.advance(30)
    lot.tick()
    sent = link.drain()
    assert {s.topic for s in sent} == {
        TOPICS.availability("lot-a"),
        TOPICS.lot_occupancy("lot-a"),
    }
    assert [(r["seq"], r["occupied"]) for r in readings(sent)] == [
        (1, 0), (2, 312), (3, 313), (4, 0), (5, 0)
    ]  # fmt: skip
    with pytest.raises(ValueError, match="fewer than 0"):
        lot.set_occupied(-1)


def test_badge_reader_publishes_each_scan_and_re_states_its_roster_every_minute() -> None:
    """No heartbeat of its scans; its roster (who is on duty here, by its own scans) on
    its connection and then every minute, on the roster topic, with the next seq."""
    clock = Clock()
    reader = BadgeReader(EVENT, "first-aid", clock=clock, tz=NY)
    link = attached(reader)
    reader.scan("RN-0042", "nurse", "on")
    reader.scan("MD-0001", "doctor", "on")
    reader.scan("RN-0042", "nurse", "off")
    clock.advance(59)
    assert reader.tick() is False
    clock.advance(1)
    assert reader.tick() is True
    assert reader.tick() is False
    sent = link.drain()
    assert sent[0].payload == b"online"
    assert [s.topic for s in sent[1:]] == [
        TOPICS.staff_roster("first-aid"),
        *[TOPICS.staff_badge("first-aid")] * 3,
        TOPICS.staff_roster("first-aid"),
    ]
    assert readings(sent)[:2] == [
        {"seq": 1, "ts": "2027-07-04T10:00:00.000-04:00", "on_duty": []},
        {
            "seq": 2,
            "ts": "2027-07-04T10:00:00.000-04:00",
            "badge": "RN-0042",
            "role": "nurse",
            "action": "on",
        },
    ]
    assert readings(sent)[-1] == {
        "seq": 5,
        "ts": "2027-07-04T10:01:00.000-04:00",
        "on_duty": [{"badge": "MD-0001", "role": "doctor"}],
    }
    with pytest.raises(ValueError, match="role"):
        reader.scan("X-1", "janitor", "on")
    with pytest.raises(ValueError, match="action"):
        reader.scan("X-1", "nurse", "maybe")


def test_a_badge_reader_may_be_told_never_to_re_state() -> None:
    clock = Clock()
    reader = BadgeReader(EVENT, "first-aid", clock=clock, tz=NY, restate_s=None)
    link = attached(reader)
    reader.scan("RN-0042", "nurse", "on")
    clock.advance(3600)
    assert reader.tick() is False
    assert [r["seq"] for r in readings(link.drain())] == [1]


def test_a_badge_readers_roster_survives_a_reboot(tmp_path: Path) -> None:
    state = tmp_path / "first-aid.json"
    reader = BadgeReader(EVENT, "first-aid", clock=Clock(), state_file=state)
    attached(reader)
    reader.scan("RN-1", "nurse", "on")
    again = BadgeReader(EVENT, "first-aid", clock=Clock(), state_file=state)
    link = attached(again)
    assert readings(link.drain()) == [
        {"seq": 3, "ts": "2027-07-04T14:00:00.000+00:00",
         "on_duty": [{"badge": "RN-1", "role": "nurse"}]},
    ]  # fmt: skip


def test_badge_scans_made_offline_are_sent_in_order_with_their_own_times() -> None:
    clock = Clock()
    reader = BadgeReader(EVENT, "first-aid", clock=clock)
    link = attached(reader)
    link.set_online(False)
    link.drain()
    reader.scan("RN-0001", "nurse", "on")
    clock.advance(60)
    reader.scan("MD-0001", "doctor", "on")
    assert reader.backlog == 2
    clock.advance(60)
    link.set_online(True)
    sent = readings(link.drain())
    assert [(s["seq"], s["badge"], s["ts"]) for s in sent[:2]] == [
        (2, "RN-0001", "2027-07-04T14:00:00.000+00:00"),
        (3, "MD-0001", "2027-07-04T14:01:00.000+00:00"),
    ]
    # then its roster, as it stands now (a broker that restarted may have lost some)
    assert sent[2] == {
        "seq": 4,
        "ts": "2027-07-04T14:02:00.000+00:00",
        "on_duty": [{"badge": "MD-0001", "role": "doctor"}, {"badge": "RN-0001", "role": "nurse"}],
    }
    assert reader.backlog == 0


@pytest.mark.parametrize(
    ("line", "expected"),
    [("in", (1, 0)), ("out", (0, 1)), ("in 3", (3, 0)), ("  out 2\n", (0, 2))],
)
def test_gate_counter_input_lines(line: str, expected: tuple[int, int]) -> None:
    assert gate_counter.parse_line(line) == expected


@pytest.mark.parametrize("line", ["", "inn", "in -3", "in 2 3", "out x"])
def test_bad_gate_counter_lines_are_refused(line: str) -> None:
    with pytest.raises(ValueError, match="expected|whole number"):
        gate_counter.parse_line(line)


def test_lot_and_badge_input_lines() -> None:
    assert lot_sensor.parse_line("occupied 312") == ("set", 312)
    assert lot_sensor.parse_line("+1") == ("add", 1)
    assert lot_sensor.parse_line("-2") == ("add", -2)
    assert badge_reader.parse_line("RN-0042 nurse on") == ("RN-0042", "nurse", "on")
    for bad in ("occupied", "1", "occupied -3"):
        with pytest.raises(ValueError, match="expected 'occupied N'"):
            lot_sensor.parse_line(bad)
    for bad in ("RN-0042 nurse", "RN-0042 vet on", "RN-0042 nurse later"):
        with pytest.raises(ValueError, match="expected|role|action"):
            badge_reader.parse_line(bad)
