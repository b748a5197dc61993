"""Small pieces of the core, exactly: instants as integers, rounding, topics, encoding."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import msgspec

from kent_ops.core import ordinance as law
from kent_ops.core import wire
from kent_ops.core.timeutil import from_us, to_us
from kent_ops.core.wire import TopicProblem, TopicRef, Topics

TOPICS = Topics("kent-summer-fest-2027")
P = TOPICS.prefix


def test_an_instant_is_a_whole_number_of_microseconds() -> None:
    t = datetime(2027, 7, 4, 14, 0, tzinfo=UTC) + timedelta(microseconds=7)
    us = to_us(t)
    assert type(us) is int
    assert from_us(us) == t
    assert to_us(t + timedelta(microseconds=1)) == us + 1


def test_no_nurse_and_no_car_space_for_no_one_or_fewer() -> None:
    assert law.nurses_required(0) == 0
    assert law.nurses_required(-600) == 0  # a hand count below the counters' is not a crowd
    assert law.nurses_required(1) == 1
    assert law.car_spaces_required(-9) == 0


def test_topics_name_their_kind_and_say_what_is_wrong() -> None:
    assert TOPICS.parse(TOPICS.status) == TopicRef("status", "")
    assert TOPICS.parse(TOPICS.alert("A-0001")) == TopicRef("alert", "A-0001")
    # malformed on purpose, so spelled by hand: Topics builds only well-formed topics
    assert TOPICS.parse(f"{P}/gate//count") == TopicProblem("", "gate id is empty", True)
    assert TOPICS.parse(f"{P}/weather") == TopicProblem(
        "", f"topic '{P}/weather' is not a kent-ops topic", False
    )
    assert TOPICS.parse(f"{P}/gate/north/speed") == TopicProblem(
        "north", f"topic '{P}/gate/north/speed' is not a kent-ops topic", False
    )


def test_an_outbound_record_encodes_to_its_json() -> None:
    command = wire.GateCommand(admit=False, attendance=4000, hold_at=4000, resume_below=3960,
                               reason="HOLD")  # fmt: skip
    assert msgspec.json.decode(wire.encode(command)) == {
        "admit": False, "attendance": 4000, "hold_at": 4000, "resume_below": 3960,
        "reason": "HOLD", "hold_in_s": None,
    }  # fmt: skip


def test_a_prefix_never_seen_before_is_decoded() -> None:
    """Topics are cached per event: the first message of a new event must work too."""
    fresh = Topics(f"fresh-{uuid.uuid4().hex[:8]}")
    payload = b'{"seq":1,"ts":"2027-07-04T14:00:00Z","in_total":5,"out_total":0}'
    decoded = wire.decode(fresh.prefix, {"north": "gate"}, fresh.gate_count("north"), payload)
    assert isinstance(decoded, wire.Decoded)
    assert (decoded.kind, decoded.source) == ("gate", "north")
