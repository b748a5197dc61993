"""Extreme instants at the wire: every one is refused, or one the engine and report hold.

Any ISO 8601 date-time a client can write (years 0001 to 9999, offsets to ±23:59), in
every instant field of every payload, on both clocks: the decoder never raises; what it
accepts lies in the years kent-ops holds; and the engine that takes it goes on to tick,
report its status, snapshot and restore without an exception. The permit's instants are
held to the same range. docs/protocol.md, "Times".
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit, PermitError, load_permit
from kent_ops.core.timeutil import EARLIEST, LATEST, from_us, to_us
from kent_ops.core.wire import Decoded, Rejection, Topics, decode

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]
PERMIT: Permit = load_permit(ROOT / "examples" / "permit.toml")
TOPICS = Topics(PERMIT.event_id)
PREFIX = TOPICS.prefix
T0 = datetime(2027, 7, 4, 15, 0, tzinfo=UTC)

offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda m: timezone(timedelta(minutes=m))
)
extreme = st.one_of(
    st.datetimes(timezones=offsets),
    st.sampled_from([datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999999)]).flatmap(  # noqa: DTZ001
        lambda d: offsets.map(lambda tz: d.replace(tzinfo=tz))
    ),
    st.sampled_from([EARLIEST, LATEST, EARLIEST - timedelta(microseconds=1)]),
    st.datetimes(min_value=datetime(2027, 5, 1), max_value=datetime(2027, 9, 1), timezones=offsets),
)


def payloads(t: str) -> list[tuple[str, dict[str, Any]]]:
    """Every inbound payload with an instant, each carrying ``t`` there."""
    good = T0.isoformat()
    return [
        (TOPICS.gate_count("north"), {"seq": 1, "ts": t, "in_total": 5, "out_total": 0}),
        (TOPICS.lot_occupancy("lot-a"), {"seq": 1, "ts": t, "occupied": 3}),
        (TOPICS.staff_badge("first-aid"),
         {"seq": 1, "ts": t, "badge": "DR-1", "role": "doctor", "action": "on"}),
        (TOPICS.inspector("i1", "note"), {"ts": t, "text": "hello"}),
        (TOPICS.inspector("i1", "inspection"), {"ts": t, "item": "C(3)", "result": "ok"}),
        (TOPICS.inspector("i1", "adjust"), {"ts": t, "attendance": 4, "reason": "sweep"}),
        (TOPICS.clerk_permit("town"), {"ts": t, "status": "revoked", "effective_at": good,
                               "resolution": "TB-1"}),
        (TOPICS.clerk_permit("town"), {"ts": good, "status": "revoked", "effective_at": t,
                               "resolution": "TB-2"}),
        (TOPICS.notifier_sent("n1"), {"ts": t, "alert": "A-0001", "state": "active", "to": "i1",
                              "channel": "sms", "ok": True}),
    ]  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(instant=extreme)
def test_the_decoder_refuses_every_instant_outside_the_range_and_never_raises(
    instant: datetime,
) -> None:
    inside = EARLIEST <= instant < LATEST
    for area, body in payloads(instant.isoformat()):
        result = decode(PREFIX, PERMIT.sensors, area, json.dumps(body).encode())
        if isinstance(result, Rejection):
            assert not inside or "outside the years" not in result.reason, result
            continue
        assert isinstance(result, Decoded)
        assert inside, (area, body)
        for name in ("ts", "effective_at"):
            value = getattr(result.record, name, None)
            if value is not None:
                assert EARLIEST <= value < LATEST
                assert from_us(to_us(value)) == value  # the engine holds it exactly


@pytest.mark.parametrize("clock", ["sensor", "wall"])
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(instants=st.lists(extreme, min_size=1, max_size=4))
def test_an_engine_fed_extreme_instants_goes_on_ticking_reporting_and_snapshotting(
    clock: str, instants: list[datetime]
) -> None:
    engine = Engine(PERMIT, clock=clock)  # type: ignore[arg-type]
    received = T0
    for instant in instants:
        for area, body in payloads(instant.isoformat()):
            received += timedelta(seconds=1)
            result = engine.feed(area, json.dumps(body).encode(), received)
            assert result.accepted or result.reason
    engine.tick(received + timedelta(days=6))  # past every clean-up and pending delay
    engine.collect_changes()
    engine.status()
    restored = Engine.restore(PERMIT, engine.snapshot({}), clock)  # type: ignore[arg-type]
    assert restored.status() == engine.status()
    if clock == "sensor":  # the engine's time stays near the permit's windows
        assert engine.now is not None
        assert PERMIT.first_start - timedelta(days=31) <= engine.now
        assert engine.now <= PERMIT.last_end + timedelta(days=31)


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("start = 2027-07-04T10:00:00-04:00", "start = 9999-12-31T10:00:00-14:00",
         "windows[0].start"),
        ("end = 2027-07-04T23:30:00-04:00", "end = 2100-01-01T23:30:00-04:00", "windows[0].end"),
        ("start = 2027-07-04T10:00:00-04:00", "start = 0001-01-01T10:00:00+14:00",
         "windows[0].start"),
        ('status = "issued"', 'status = "revoked"\nrevoked_at = 9999-12-31T23:59:59-14:00',
         "permit.revoked_at"),
    ],
)  # fmt: skip
def test_a_permit_with_an_absurd_year_is_refused_naming_the_field(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    text = (ROOT / "examples" / "permit.toml").read_text()
    assert old in text
    path = tmp_path / "permit.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(PermitError) as raised:
        load_permit(path)
    assert any(
        p.startswith(f"{field}: ") and "is outside the years kent-ops holds" in p
        for p in raised.value.problems
    ), raised.value.problems
