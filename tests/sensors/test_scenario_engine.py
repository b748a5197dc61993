"""The scenarios through the real engine (no broker): each raises what it was built for.

The engine and the reference tally are written apart; here they must agree on the
figures, and the engine must raise the alerts each scenario exists to cause.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit, load_permit
from sensors.scenario import generate
from sensors.tally import expected_totals

EXAMPLE_PERMIT = Path(__file__).resolve().parents[2] / "examples" / "permit.toml"


@pytest.fixture(scope="module")
def permit() -> Permit:
    return load_permit(EXAMPLE_PERMIT)


def run(
    permit: Permit, scenario: str, uncertain_seen: list[bool] | None = None
) -> tuple[Engine, dict[str, int]]:
    engine = Engine(permit, clock="sensor")
    messages = list(generate(permit, scenario, seed=1))
    for i, m in enumerate(messages):
        engine.feed(m.topic, m.payload, m.at, record_id=i + 1)
        if uncertain_seen is not None and i % 50 == 0:
            uncertain_seen.append(engine.status().attendance.uncertain)
    engine.tick(messages[-1].at)
    return engine, expected_totals(messages, permit)


def rules(engine: Engine) -> dict[str, list[wire.Alert]]:
    found: dict[str, list[wire.Alert]] = {}
    for alert in engine.alerts.values():
        found.setdefault(alert.rule, []).append(alert)
    return found


def test_festival_raises_the_nurse_ratio_and_maximum_breaches(permit: Permit) -> None:
    engine, totals = run(permit, "festival")
    attendance = engine.status().attendance
    assert (attendance.current, attendance.entries) == (
        totals["attendance"],
        totals["entries"],
    )
    assert attendance.peak > permit.max_at_one_time
    found = rules(engine)
    assert len(found["nurse-ratio"]) == 1
    assert len(found["max-at-one-time"]) == 1
    breaches = {r for r, alerts in found.items() if alerts[0].severity == "breach"}
    assert breaches == {"nurse-ratio", "max-at-one-time"}


def test_quiet_raises_nothing(permit: Permit) -> None:
    engine, totals = run(permit, "quiet")
    assert engine.alerts == {}
    assert engine.status().attendance.entries == totals["entries"]


def test_faults_are_stitched_and_the_outage_is_uncertain(permit: Permit) -> None:
    seen: list[bool] = []
    engine, totals = run(permit, "faults", seen)
    assert any(seen)  # attendance was uncertain while the gate was down
    assert not seen[-1]  # and certain again once it was back
    status = engine.status()
    assert status.attendance.current == totals["attendance"]
    assert status.attendance.entries == totals["entries"]
    assert status.rejected == 5
    found = rules(engine)
    assert set(found) == {"counter-reset", "sensor-offline", "cars-exceed-persons"}
    # The lots' cross-check at the day's edges only: cars parked before the gates open
    # and after the crowd has gone out through them, nobody counted inside (docs/law.md,
    # "When the lots contradict the gates"); never while the south counter was down.
    for cross in found["cars-exceed-persons"]:
        assert cross.worst.observed["attendance"] == 0
    [offline] = found["sensor-offline"]
    assert offline.subject == "south"
    assert offline.ended_at is not None
