"""The inspector dashboard and the gate view keep each checkpoint they receive as a witness.

Driven with Pilot against a real Mosquitto: the aggregator's retained checkpoint (as it
encodes one) is there when the view starts, a second arrives while it runs; both are
appended to the witness file, byte for byte as published, once each.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import dashboard_samples as samples
import pytest
from dashboard_mqtt import publish
from live_support import until

from dashboards.gate.app import make_gate_app
from dashboards.inspector.app import make_inspector_app
from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.broker.witness import WitnessKeeper
from kent_ops.core import wire
from kent_ops.core.wire import Topics
from kent_ops.core.witness import read_witness

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

TOPICS = Topics(samples.EVENT)


def checkpoint(record: int) -> bytes:
    """A checkpoint as the aggregator publishes it."""
    return wire.encode(wire.Checkpoint(record=record, hash=f"{record:064x}", ts=datetime.now(UTC)))


def kept(path: Path) -> list[bytes]:
    return [json.loads(line)["payload"].encode() for line in path.read_bytes().splitlines()]


@pytest.mark.parametrize("view", ["inspector", "gate"])
async def test_each_view_keeps_the_checkpoints_it_receives(
    broker: MosquittoBroker, tmp_path: Path, view: str
) -> None:
    first, second = checkpoint(1204), checkpoint(6207)
    publish(broker, [(TOPICS.checkpoint, first)])
    path = tmp_path / "witness" / f"{samples.EVENT}.jsonl"
    by = "inspector-insp-2" if view == "inspector" else "deputy-north"
    address = parse_broker_url(broker.url)
    with WitnessKeeper(path, samples.EVENT, by) as keeper:
        app = (
            make_inspector_app(samples.EVENT, address, "insp-2", blink=False, witness=keeper)
            if view == "inspector"
            else make_gate_app("north", samples.EVENT, address, state_dir=tmp_path, witness=keeper)
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: keeper.kept == 1, what="the retained checkpoint kept")
            publish(broker, [(TOPICS.checkpoint, second)])
            await until(pilot, lambda: keeper.kept == 2, what="the next checkpoint kept")
    assert kept(path) == [first, second]
    read = read_witness(path.read_bytes(), samples.EVENT)
    assert [(e.record, e.by) for e in read.entries] == [(1204, by), (6207, by)]
    assert json.loads(path.read_bytes().splitlines()[0])["retained"] is True


async def test_a_view_without_a_witness_does_not_subscribe_to_checkpoints(
    broker: MosquittoBroker,
) -> None:
    app = make_inspector_app(samples.EVENT, parse_broker_url(broker.url), "insp-2", blink=False)
    assert app.feed is not None
    assert TOPICS.checkpoint not in app.feed.subscriptions
