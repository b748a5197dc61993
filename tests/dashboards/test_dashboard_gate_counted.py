"""The terminal gate view beside an aggregator on its sensors' clock: counted means counted.

A real Mosquitto and a real aggregator (the service ``kent-ops run --clock sensor``
runs) fed a gate counter's signed readings on a simulated day, months from the wall
clock; the gate view driven with Pilot. Its tally stamps each tap with the
aggregator's time, and the view says ``counted`` only once the aggregator's status
counts it. A tally whose key the event does not know is refused: the view says, in
words, that its tap was not counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from live_support import FAST, T0, TOPICS, Publisher, ts, until, write_permit
from wire_support import gate_count

from dashboards.gate.app import GateApp, make_gate_app
from dashboards.gate.widgets.figures import TallyPanel
from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit
from kent_ops.core.wire import generate_keys_file, load_keys
from kent_ops.evidence.records import EvidenceRecord, read_records
from kent_ops.service.aggregator import Aggregator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

MANUAL = TOPICS.gate_count("north-manual")


class Rehearsal:
    """The aggregator on its sensors' clock, the event's keys, and its evidence log."""

    def __init__(self, tmp_path: Path, broker: MosquittoBroker) -> None:
        (tmp_path / "keys.toml").write_text(generate_keys_file(["north", "south", "north-manual"]))
        self.keys = load_keys(tmp_path / "keys.toml")
        permit = write_permit(tmp_path, signing="keys.toml")
        self.evidence = tmp_path / "evidence.sqlite"
        self.aggregator = Aggregator(
            load_permit(permit), self.evidence, parse_broker_url(broker.url),
            clock="sensor", timing=FAST,
        )  # fmt: skip
        self.aggregator.start()
        assert self.aggregator.connected.wait(10), "the aggregator did not connect"

    def records(self, topic: str) -> list[EvidenceRecord]:
        return [r for r in read_records(self.evidence) if r.kind == "message" and r.topic == topic]


@pytest.fixture
def rehearsal(tmp_path: Path, broker: MosquittoBroker) -> Iterator[Rehearsal]:
    r = Rehearsal(tmp_path, broker)
    try:
        yield r
    finally:
        r.aggregator.stop()
        assert r.aggregator.wait(20)


def started_day(rehearsal: Rehearsal, publisher: Publisher) -> None:
    """The north counter's first reading: the simulated day is at 10:01 in Kent."""
    reading = gate_count(1, ts(60), 40, 0, key=rehearsal.keys["north"])
    publisher.send(TOPICS.gate_count("north"), reading)


def gate_app(broker: MosquittoBroker, tmp_path: Path, key: bytes) -> GateApp:
    return make_gate_app(
        "north", "kent-summer-fest-2027", parse_broker_url(broker.url),
        state_dir=tmp_path / "tally", signing_key=key,
    )  # fmt: skip


def tally_line(app: GateApp) -> str:
    return str(app.screen.query_one(TallyPanel).render())


async def test_a_tap_beside_a_rehearsal_carries_its_time_and_reads_counted_once_counted(
    broker: MosquittoBroker, tmp_path: Path, rehearsal: Rehearsal, publisher: Publisher
) -> None:
    started_day(rehearsal, publisher)
    app = gate_app(broker, tmp_path, rehearsal.keys["north-manual"])
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.status is not None and app.status.ts is not None)
        assert app.clock() == T0.replace(minute=1)  # the aggregator's time, not the wall's
        await pilot.press("plus", "plus", "minus")
        await until(pilot, lambda: "#3 counted" in tally_line(app), within=20)
        assert app.status is not None
        counted = app.status.gates["north-manual"]
        assert (counted.in_, counted.out, counted.online) == (2, 1, True)
        assert "✓" not in tally_line(app)
    records = rehearsal.records(MANUAL)
    assert records
    assert all(r.accepted and r.reason is None for r in records), [r.reason for r in records]
    stamps = {datetime.fromisoformat(json.loads(r.payload)["ts"]) for r in records}
    assert stamps == {T0.replace(minute=1)}


async def test_a_tap_the_aggregator_refuses_reads_not_counted_in_words(
    broker: MosquittoBroker, tmp_path: Path, rehearsal: Rehearsal, publisher: Publisher
) -> None:
    started_day(rehearsal, publisher)
    app = gate_app(broker, tmp_path, bytes(32))  # a key the event does not know
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.status is not None and app.status.ts is not None)
        await pilot.press("plus")
        await until(pilot, lambda: "#1 sent, not yet counted" in tally_line(app), within=10)
        said = "#1 not counted by the aggregator: tell the command post"
        await until(pilot, lambda: said in " ".join(tally_line(app).split()), within=30)
        assert "✓" not in tally_line(app)
        assert app.status is not None
        tally = app.status.gates["north-manual"]
        assert (tally.in_, tally.out, tally.online) == (0, 0, None)  # not used, not offline
    reasons = [r.reason or "" for r in rehearsal.records(MANUAL)]
    assert reasons
    assert all(reason.startswith("bad signature") for reason in reasons), reasons
