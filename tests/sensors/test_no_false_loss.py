"""The simulated days lose nothing, and so say nothing of a loss: no ``sensor-gap``, no
``sensor-stuck``, no ``seq`` refused, the staff's roster never in doubt, through the very
engine the aggregator runs (the demo's day and the faults scenario included: a counter
restart, an outage, QoS 1 redeliveries, malformed messages)."""

from __future__ import annotations

from collections import Counter

import pytest

from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit
from sensors.scenario import generate

LOSSES = {"sensor-gap", "sensor-stuck", "broker-restarted"}


@pytest.mark.parametrize("scenario", ["festival", "faults", "quiet"])
def test_the_simulated_days_lose_nothing(example_permit: Permit, scenario: str) -> None:
    engine = Engine(example_permit, clock="sensor")
    refused: Counter[str] = Counter()
    rosters = 0
    for m in generate(example_permit, scenario):
        result = engine.feed(m.topic, m.payload, m.at)
        if not result.accepted and m.fault is None:
            refused[result.reason or ""] += 1
        if m.topic.endswith("/roster"):
            rosters += 1
            assert not engine.status().medical.uncertain
    assert refused == Counter()  # only the faults' own malformed messages are refused
    rules = Counter(alert.rule for alert in engine.alerts.values())
    assert not LOSSES & set(rules), rules
    assert engine.gaps == []
    assert rosters > 60  # each reader re-stated its roster every minute of the day
    for sensor in example_permit.sensors:
        track = engine.counts.seq_track(sensor)
        assert track is None or track.gaps == 0, sensor
