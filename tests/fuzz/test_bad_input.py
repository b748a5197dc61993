"""Bad input: arbitrary topics and payloads never crash the engine, and a
rejected message changes no figure."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import Topics, decode

pytestmark = pytest.mark.slow

PERMIT: Permit = load_permit(Path(__file__).parents[2] / "examples" / "permit.toml")
TOPICS = Topics(PERMIT.event_id)
PREFIX = TOPICS.prefix
T0 = datetime(2027, 7, 4, 15, 0, tzinfo=UTC)

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=8,
)
field_names = st.sampled_from(
    ["seq", "ts", "in_total", "out_total", "occupied", "badge", "role", "action", "text",
     "alert", "comment", "item", "result", "note", "attendance", "reason", "sig"]
)  # fmt: skip
plausible_object = st.dictionaries(field_names, json_value, max_size=8)


def _encode(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


payloads = st.one_of(
    st.binary(max_size=300),
    plausible_object.map(_encode),
    json_value.map(_encode),
    st.sampled_from(
        [b"[" * 5000 + b"]" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000, b"x" * (64 * 1024 + 1)]
    ),
    st.text(max_size=100).map(lambda s: s.encode("utf-8", "surrogatepass")),
)
areas = st.sampled_from(
    [TOPICS.gate_count("north"), TOPICS.gate_count("nowhere"), TOPICS.gate_count("lot-a"),
     TOPICS.lot_occupancy("lot-a"), TOPICS.lot_occupancy("north"), TOPICS.staff_badge("first-aid"),
     TOPICS.availability("north"), TOPICS.availability("ghost"), TOPICS.inspector("i1", "note"),
     TOPICS.inspector("i1", "ack"), TOPICS.inspector("i1", "inspection"),
     TOPICS.inspector("i1", "adjust"), TOPICS.inspector("i1", "other"), TOPICS.status,
     f"{TOPICS.prefix}/x/y/z/w"]  # deliberately not a kent-ops topic, so spelled by hand
)  # fmt: skip
topics = st.one_of(
    areas,
    st.text(max_size=60),
)


def _figures(engine: Engine) -> tuple[Any, ...]:
    s = engine.status()
    return (
        s.attendance.current,
        s.attendance.entries,
        s.attendance.exits,
        s.parking.occupied,
        s.medical.doctors_on_duty,
        s.medical.nurses_on_duty,
        s.security.on_duty,
        tuple(sorted(s.checklist)),
        tuple(a.id for a in engine.alerts.values()),
    )


BATCH = 20
CHECKED = [0]


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batch=st.lists(st.tuples(topics, payloads), min_size=BATCH, max_size=BATCH))
def test_decoder_never_raises(batch: list[tuple[str, bytes]]) -> None:
    """500 examples of 20 messages: 10,000 arbitrary topics and payloads in all."""
    for topic, payload in batch:
        result = decode(PREFIX, PERMIT.sensors, topic, payload)
        assert type(result).__name__ in ("Decoded", "Rejection")
        if type(result).__name__ == "Rejection":
            assert result.reason
            assert "\n" not in result.reason
        CHECKED[0] += 1


def test_the_decoder_fuzz_covered_ten_thousand_messages() -> None:
    """The fuzz above really threw 10,000 messages (it is run here if it has not run)."""
    if CHECKED[0] == 0:
        test_decoder_never_raises()
    assert CHECKED[0] >= 10_000


ENGINE = Engine(PERMIT, clock="wall")
ENGINE.feed(
    TOPICS.gate_count("north"),
    b'{"seq":1,"ts":"2027-07-04T15:00:00Z","in_total":700,"out_total":20}',
    T0,
)
STEP = [0]


@settings(
    max_examples=2_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(topic=topics, payload=payloads)
def test_engine_records_every_message_and_rejections_move_no_figure(
    topic: str, payload: bytes
) -> None:
    STEP[0] += 1
    before = _figures(ENGINE)
    counted = (ENGINE.accepted, ENGINE.rejected)
    result = ENGINE.feed(topic, payload, T0 + timedelta(milliseconds=STEP[0]))
    after_counts = (ENGINE.accepted, ENGINE.rejected)
    assert after_counts[0] + after_counts[1] == counted[0] + counted[1] + 1
    if not result.accepted:
        assert result.reason
        assert _figures(ENGINE) == before
    status = msgspec.to_builtins(ENGINE.status())
    json.dumps(status, allow_nan=False)  # the status is always publishable JSON
    assert all(not isinstance(v, float) or math.isfinite(v) for v in status["attendance"].values())
