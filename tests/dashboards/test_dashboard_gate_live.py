"""The deputy's gate view driven with Pilot against a real Mosquitto.

The order follows the retained gate command; the manual tally publishes rising
cumulative totals as gate ``{gate}-manual`` at QoS 1, announces itself, heartbeats,
and carries on from its state file after the app restarts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dashboard_samples as samples
import pytest
from dashboard_mqtt import Collector, publish
from live_support import until

from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.gate.app import GateApp, make_gate_app
from dashboards.gate.widgets.order_sign import OrderSign
from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.commands.cli import main
from kent_ops.core.wire import Topics, encode_availability, generate_keys_file, unsign

pytestmark = pytest.mark.timeout(60)

TOPICS = Topics(samples.EVENT)
COUNT = TOPICS.gate_count("north-manual")
AVAILABILITY = TOPICS.availability("north-manual")


@pytest.fixture
def tally_topics(broker: MosquittoBroker) -> Iterator[Collector]:
    collector = Collector(broker, COUNT, AVAILABILITY)
    yield collector
    collector.close()


def make_app(broker: MosquittoBroker, state_dir: Path, heartbeat_s: float = 30.0) -> GateApp:
    return make_gate_app(
        "north",
        samples.EVENT,
        parse_broker_url(broker.url),
        state_dir=state_dir,
        heartbeat_s=heartbeat_s,
    )


def counts(collector: Collector) -> list[tuple[int, int, int]]:
    return [(p["seq"], p["in_total"], p["out_total"]) for p in collector.on(COUNT)]


@pytest.mark.integration
async def test_the_gate_view_flips_to_hold_when_its_command_says_so(
    broker: MosquittoBroker, tmp_path: Path
) -> None:
    status = samples.status(ts=datetime.now(UTC).isoformat())
    publish(
        broker,
        [
            (TOPICS.status, status),
            (TOPICS.aggregator_availability, encode_availability(True)),
            (TOPICS.gate_command("north"), samples.command(admit=True)),
            (TOPICS.gate_command("south"), samples.command(admit=False)),  # not ours
        ],
    )
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        sign = app.screen.query_one(OrderSign)
        await until(pilot, lambda: sign.order.word == "ADMIT")
        assert app.screen.query_one("#order").has_class("-admit")
        assert app.problem is None
        publish(broker, [(TOPICS.gate_command("north"), samples.command(admit=False))])
        await until(pilot, lambda: sign.order.word == "HOLD")
        await pilot.pause()
        order = app.screen.query_one("#order")
        assert order.has_class("-hold")
        assert not order.has_class("-admit")
        assert sign.order.hold_at == 4000
        assert "HOLD" not in str(sign.render())  # drawn in large letters, not spelled out
        assert "█" in str(sign.render())


@pytest.mark.integration
async def test_the_manual_tally_publishes_rising_totals_and_survives_a_restart(
    broker: MosquittoBroker, tmp_path: Path, tally_topics: Collector
) -> None:
    publish(broker, [(TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat()))])
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.status is not None)
        await pilot.press("plus", "plus", "equals_sign", "minus")
        await until(pilot, lambda: len(counts(tally_topics)) == 4)
        await until(pilot, lambda: app.sent == 4, within=5)  # the broker has all four taps
    assert counts(tally_topics) == [(1, 1, 0), (2, 2, 0), (3, 3, 0), (4, 3, 1)]
    for payload in tally_topics.on(COUNT):
        assert set(payload) == {"seq", "ts", "in_total", "out_total"}
        assert datetime.fromisoformat(payload["ts"]).tzinfo is not None
    # Online once used, offline when the deputy quits.
    tally_topics.wait_for(lambda: tally_topics.on(AVAILABILITY)[-1:] == ["offline"])
    assert tally_topics.on(AVAILABILITY) == ["online", "offline"]
    state = json.loads((tmp_path / f"{samples.EVENT}.north-manual.json").read_text())
    assert state == {"sensor": "north-manual", "seq": 4, "in_total": 3, "out_total": 1}

    # The tablet reboots: the tally carries on from the file.
    again = make_app(broker, tmp_path)
    async with again.run_test(size=(80, 24)) as pilot:
        # On connecting it repeats its totals with the next seq, then counts on.
        await until(pilot, lambda: len(counts(tally_topics)) == 5)
        await pilot.press("plus")
        await until(pilot, lambda: len(counts(tally_topics)) == 6)
    assert counts(tally_topics)[4:] == [(5, 3, 1), (6, 4, 1)]


@pytest.mark.integration
async def test_beside_a_demo_the_view_and_its_tally_keep_the_demos_clock(
    broker: MosquittoBroker, tmp_path: Path, tally_topics: Collector
) -> None:
    """An aggregator on its sensors' clock (the demo, at 60 times real time): the view
    shows that time, not the tablet's, and the tally stamps its taps with it, so the
    aggregator never takes a tap for a count from hours away."""
    simulated = datetime(2027, 7, 10, 14, 42, tzinfo=UTC)  # 10:42 EDT; the wall clock is not
    status = samples.status(ts=simulated.isoformat(), clock="sensor")
    publish(
        broker,
        [(TOPICS.status, status), (TOPICS.aggregator_availability, encode_availability(True))],
    )
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.status is not None and app.now == simulated)
        assert app.clock() == simulated
        assert "10:42:00 EDT" in str(app.screen.query_one("#header").render())
        await pilot.press("plus")
        await until(pilot, lambda: len(counts(tally_topics)) == 1)
        await pilot.pause(1.2)  # a tick later: the age is in real seconds, not 2 years
        assert app.problem is None
    [payload] = tally_topics.on(COUNT)
    assert datetime.fromisoformat(payload["ts"]) == simulated


@pytest.mark.integration
async def test_a_tally_in_use_heartbeats_its_totals(
    broker: MosquittoBroker, tmp_path: Path, tally_topics: Collector
) -> None:
    app = make_app(broker, tmp_path, heartbeat_s=0.2)
    beats = 0
    heartbeat = app.manual.tick

    def counted_heartbeat() -> bool:
        nonlocal beats
        beats += 1
        return heartbeat()

    app.manual.tick = counted_heartbeat  # type: ignore[method-assign]
    publish(broker, [(TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat()))])
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.status is not None)
        await until(pilot, lambda: beats >= 3)  # its heartbeat came round, unused, thrice
        await pilot.press("plus")
        await until(pilot, lambda: len(counts(tally_topics)) >= 3)
    seen = counts(tally_topics)
    # One connection keeps the order: a heartbeat sent while unused would have come
    # before the first count, with seq 1 and totals 0 and 0.
    assert seen[0] == (1, 1, 0)
    assert [seq for seq, _, _ in seen] == list(range(1, len(seen) + 1))
    assert {(i, o) for _, i, o in seen} == {(1, 0)}


@pytest.mark.integration
async def test_the_gate_view_shows_the_banner_when_the_broker_stops(
    broker: MosquittoBroker, tmp_path: Path
) -> None:
    publish(
        broker,
        [
            (TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat())),
            (TOPICS.gate_command("north"), samples.command(admit=True)),
        ],
    )
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        sign = app.screen.query_one(OrderSign)
        await until(pilot, lambda: sign.order.word == "ADMIT" and app.problem is None)
        broker.stop()
        await until(pilot, lambda: (app.problem or "").startswith("Broker unreachable"))
        await pilot.pause()
        assert app.screen.query_one(ConnectionBanner).has_class("-shown")
        assert app.has_class("-stale")
        assert sign.order.word == "ADMIT"  # the last order stays, greyed
        await pilot.press("plus")  # counting goes on, saved on the tablet
        await pilot.pause()
        assert app.tally.in_total == 1


@pytest.mark.integration
async def test_a_signing_tally_signs_what_it_publishes(
    broker: MosquittoBroker, tmp_path: Path, tally_topics: Collector
) -> None:
    key = bytes(range(32))
    app = make_gate_app(
        "north", samples.EVENT, parse_broker_url(broker.url), state_dir=tmp_path, signing_key=key
    )
    publish(broker, [(TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat()))])
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.status is not None)
        await pilot.press("plus")
        await until(pilot, lambda: len(counts(tally_topics)) == 1)
    (raw,) = [body for topic, body in tally_topics.raw if topic == COUNT]
    unsigned = unsign(raw, key)
    assert isinstance(unsigned, bytes), unsigned
    assert json.loads(unsigned)["in_total"] == 1
    assert isinstance(unsign(raw, bytes(32)), str)  # another key: refused


def test_the_gate_command_refuses_a_keys_file_without_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.toml"
    keys.write_text(generate_keys_file(["north"]))
    argv = ["gate", "north", "--event", samples.EVENT, "--keys", str(keys)]
    assert main([*argv, "--state-dir", str(tmp_path)]) == 2
    assert "has no key for north-manual" in capsys.readouterr().err


@pytest.mark.integration
def test_the_gate_command_refuses_a_gate_the_permit_does_not_have(
    broker: MosquittoBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    publish(broker, [(TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat()))])
    argv = ["gate", "nrth", "--event", samples.EVENT, "--broker", broker.url]
    assert main([*argv, "--state-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"gate 'nrth' is not in the permit of event {samples.EVENT} (its gates: north" in err
    assert len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # refused before any tally file was made


async def test_a_broker_host_name_that_does_not_exist_is_said_so(tmp_path: Path) -> None:
    """A mistyped --broker: the banner names the host that was not found, and does not
    call the broker unreachable."""
    app = make_gate_app(
        "north", samples.EVENT, parse_broker_url("mqtt://no-such-host.invalid:1883"),
        state_dir=tmp_path,
    )  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: (app.problem or "").startswith("The broker's host name"))
        problem = app.problem or ""
        assert problem.startswith("The broker's host name 'no-such-host.invalid' ")
        assert problem.endswith(": check the broker's address; showing no figures yet")
        assert "unreachable" not in problem
