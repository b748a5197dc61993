"""Payload decoding (docs/protocol.md): every rejection reason; a rejection changes nothing.

The decoder is tested directly for its reasons; then every bad payload is fed through the
engine to prove it is counted in ``status["rejected"]`` and moves no other figure.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from core_support import PREFIX, QUICK, TOPICS, Driver, local, permit_variant

from kent_ops.core import wire
from kent_ops.core.wire import (
    MAX_PAYLOAD_BYTES,
    Ack,
    Adjust,
    Availability,
    Badge,
    Decoded,
    GateCount,
    Inspection,
    LotOccupancy,
    Note,
    Rejection,
    Topics,
    decode,
    decode_bridge_state,
)

SENSORS = permit_variant().sensors
TS = "2027-07-04T14:03:05.120-04:00"


# The decoder's subject is the JSON a device maker writes (docs/protocol.md), valid or not,
# so the payloads here are hand-made bytes, not encoded Structs.
def gate_payload(**fields: Any) -> bytes:
    body = {"seq": 17, "ts": TS, "in_total": 1234, "out_total": 87}
    body.update(fields)
    return json.dumps({k: v for k, v in body.items() if v is not ...}).encode()


def run(topic: str, payload: bytes | str) -> Decoded | Rejection:
    if isinstance(payload, str):
        payload = payload.encode()
    return decode(PREFIX, SENSORS, topic, payload)


def rejected(topic: str, payload: bytes | str) -> str:
    result = run(topic, payload)
    assert isinstance(result, Rejection), result
    return result.reason


# -- what decodes -------------------------------------------------------------------------


def test_a_gate_count_decodes_to_a_frozen_record() -> None:
    result = run(TOPICS.gate_count("north"), gate_payload())
    assert isinstance(result, Decoded)
    assert (result.kind, result.source) == ("gate", "north")
    assert result.record == GateCount(
        seq=17,
        ts=datetime(2027, 7, 4, 18, 3, 5, 120000, tzinfo=UTC),
        in_total=1234,
        out_total=87,
    )
    with pytest.raises(AttributeError):
        result.record.seq = 18  # type: ignore[misc]


def test_z_and_offsets_are_both_accepted() -> None:
    a = run(TOPICS.gate_count("north"), gate_payload(ts="2027-07-04T18:03:05.120Z"))
    b = run(TOPICS.gate_count("north"), gate_payload())
    assert isinstance(a, Decoded)
    assert isinstance(b, Decoded)
    assert a.record.ts == b.record.ts  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("tail", "payload", "kind", "source", "record"),
    [
        (
            TOPICS.lot_occupancy("lot-a"),
            {"seq": 5, "ts": TS, "occupied": 312},
            "lot",
            "lot-a",
            LotOccupancy,
        ),
        (
            TOPICS.staff_badge("first-aid"),
            {"seq": 9, "ts": TS, "badge": "RN-0042", "role": "nurse", "action": "on"},
            "badge",
            "first-aid",
            Badge,
        ),
        (
            TOPICS.inspector("insp-2", "note"),
            {"ts": TS, "text": "No water east"},
            "note",
            "insp-2",
            Note,
        ),
        (TOPICS.inspector("insp-2", "ack"), {"ts": TS, "alert": "A-0007"}, "ack", "insp-2", Ack),
        (
            TOPICS.inspector("insp-2", "inspection"),
            {"ts": TS, "item": "C(1)(h)", "result": "deficient", "note": "common cup"},
            "inspection",
            "insp-2",
            Inspection,
        ),
        (
            TOPICS.inspector("insp-2", "adjust"),
            {"ts": TS, "attendance": 3050, "reason": "sweep count"},
            "adjust",
            "insp-2",
            Adjust,
        ),
    ],
)
def test_every_input_topic_decodes(
    tail: str, payload: dict[str, Any], kind: str, source: str, record: type
) -> None:
    result = run(tail, json.dumps(payload))
    assert isinstance(result, Decoded)
    assert (result.kind, result.source) == (kind, source)
    assert isinstance(result.record, record)


@pytest.mark.parametrize(
    ("text", "online"), [("online", True), ("offline", False), ("online\n", True)]
)
def test_availability_is_plain_text(text: str, online: bool) -> None:
    result = run(TOPICS.availability("lot-b"), text)
    assert isinstance(result, Decoded)
    assert result.record == Availability(online)


@pytest.mark.parametrize(
    ("payload", "up"),
    [(b"1", True), (b"0", False), (b"1\n", True), (b" 0 ", False), (b"", None), (b"up", None)],
)
def test_a_bridge_state_is_mosquittos_1_or_0_and_nothing_else(
    payload: bytes, up: bool | None
) -> None:
    assert decode_bridge_state(payload) is up


# -- every rejection reason ---------------------------------------------------------------


def test_an_unknown_sensor_is_rejected() -> None:
    assert (
        rejected(TOPICS.gate_count("east"), gate_payload())
        == "gate 'east' is not listed in the permit"
    )
    lot = json.dumps({"seq": 1, "ts": TS, "occupied": 1})
    assert rejected(TOPICS.lot_occupancy("lot-z"), lot) == "lot 'lot-z' is not listed in the permit"
    assert "not listed" in rejected(TOPICS.availability("east"), "online")


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        (TOPICS.gate_count("lot-a"), "'lot-a' is listed as a lot, not a gate"),
        (TOPICS.lot_occupancy("north"), "'north' is listed as a gate, not a lot"),
        (TOPICS.staff_badge("lot-b"), "'lot-b' is listed as a lot, not a station"),
    ],
)
def test_a_sensor_listed_under_another_kind_is_rejected(tail: str, expected: str) -> None:
    assert rejected(tail, gate_payload()) == expected


@pytest.mark.parametrize("payload", [b'{"seq": 17, "ts": ', b"not json", b"\xff\xfe{}", b""])
def test_bad_json_is_rejected(payload: bytes) -> None:
    assert rejected(TOPICS.gate_count("north"), payload).startswith("not valid JSON")


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"in_total": "1234"}, "wrong field: Expected `int`, got `str` - at `$.in_total`"),
        ({"in_total": True}, "wrong field: Expected `int`, got `bool` - at `$.in_total`"),
        ({"out_total": 87.0}, "wrong field: Expected `int`, got `float` - at `$.out_total`"),
        ({"seq": 17.5}, "wrong field: Expected `int`, got `float` - at `$.seq`"),
        ({"in_total": None}, "wrong field: Expected `int`, got `null` - at `$.in_total`"),
        ({"out_total": ...}, "wrong field: Object missing required field `out_total`"),
        ({"ts": ...}, "wrong field: Object missing required field `ts`"),
        ({"ts": 1783000000}, "wrong field: Expected `datetime`, got `int` - at `$.ts`"),
    ],
)
def test_wrong_types_and_missing_fields_are_rejected(fields: dict[str, Any], expected: str) -> None:
    assert rejected(TOPICS.gate_count("north"), gate_payload(**fields)) == expected


def test_a_payload_that_is_not_an_object_is_rejected() -> None:
    assert rejected(TOPICS.gate_count("north"), "[1, 2]").startswith(
        "wrong field: Expected `object`"
    )


@pytest.mark.parametrize(
    ("tail", "payload", "expected"),
    [
        (TOPICS.gate_count("north"), gate_payload(in_total=-1), "negative count: in_total is -1"),
        (
            TOPICS.gate_count("north"),
            gate_payload(out_total=-87),
            "negative count: out_total is -87",
        ),
        (TOPICS.gate_count("north"), gate_payload(seq=-1), "negative seq -1"),
        (
            TOPICS.lot_occupancy("lot-a"),
            json.dumps({"seq": 1, "ts": TS, "occupied": -3}).encode(),
            "negative count: occupied is -3",
        ),
        (
            TOPICS.inspector("i", "adjust"),
            json.dumps({"ts": TS, "attendance": -1, "reason": "sweep"}).encode(),
            "negative count: attendance is -1",
        ),
    ],
)
def test_negative_counts_are_rejected(tail: str, payload: bytes, expected: str) -> None:
    assert rejected(tail, payload) == expected


@pytest.mark.parametrize("value", [10**9 + 1, 10**30])
def test_enormous_counts_are_rejected(value: int) -> None:
    reason = rejected(TOPICS.gate_count("north"), gate_payload(in_total=value))
    assert reason == f"count out of range: in_total is {value}"


def test_a_billion_is_still_a_count() -> None:
    assert isinstance(run(TOPICS.gate_count("north"), gate_payload(in_total=10**9)), Decoded)


def test_a_payload_over_64_kib_is_rejected_unread() -> None:
    base = gate_payload()
    at_limit = base[:-1] + b" " * (MAX_PAYLOAD_BYTES - len(base)) + b"}"
    assert len(at_limit) == MAX_PAYLOAD_BYTES
    assert isinstance(run(TOPICS.gate_count("north"), at_limit), Decoded)
    over = at_limit[:-1] + b" }"
    assert rejected(TOPICS.gate_count("north"), over) == (
        f"payload of {MAX_PAYLOAD_BYTES + 1:,} bytes is over the 64 KiB limit"
    )


@pytest.mark.parametrize("ts", ["2027-07-04T14:03:05", "2027-07-04T14:03:05.120"])
def test_a_timestamp_without_an_offset_is_rejected(ts: str) -> None:
    assert rejected(TOPICS.gate_count("north"), gate_payload(ts=ts)).startswith(
        "bad timestamp: ts has no offset"
    )


def test_a_timestamp_that_is_not_a_time_is_rejected() -> None:
    assert "RFC3339" in rejected(TOPICS.gate_count("north"), gate_payload(ts="yesterday teatime"))


@pytest.mark.parametrize("text", ["maybe", "ONLINE", "", '{"online": true}'])
def test_availability_other_than_online_or_offline_is_rejected(text: str) -> None:
    assert rejected(TOPICS.availability("north"), text) == (
        "availability must be 'online' or 'offline'"
    )


def test_an_unknown_inspector_topic_is_rejected() -> None:
    reason = rejected(TOPICS.inspector("insp-1", "delete"), json.dumps({"ts": TS}))
    assert reason == "inspector topic 'delete' is not note, ack, inspection or adjust"


def test_an_adjustment_without_a_reason_is_rejected() -> None:
    missing = rejected(TOPICS.inspector("i", "adjust"), json.dumps({"ts": TS, "attendance": 3050}))
    assert missing == "wrong field: Object missing required field `reason`"
    blank = rejected(
        TOPICS.inspector("i", "adjust"), json.dumps({"ts": TS, "attendance": 5, "reason": " "})
    )
    assert blank == "an adjustment needs a reason"


@pytest.mark.parametrize(
    ("tail", "payload", "expected"),
    [
        (TOPICS.inspector("i", "note"), {"ts": TS, "text": "  "}, "a note needs text"),
        (
            TOPICS.inspector("i", "note"),
            {"ts": TS, "text": "x" * 4001},
            "note text is over 4000 characters",
        ),
        (
            TOPICS.inspector("i", "inspection"),
            {"ts": TS, "item": " ", "result": "ok"},
            "an inspection needs",
        ),
        (
            TOPICS.inspector("i", "inspection"),
            {"ts": TS, "item": "C(3)", "result": "fine"},
            "wrong field",
        ),
        (
            TOPICS.staff_badge("first-aid"),
            {"seq": 1, "ts": TS, "badge": "X-1", "role": "janitor", "action": "on"},
            "wrong field",
        ),
        (
            TOPICS.staff_badge("first-aid"),
            {"seq": 1, "ts": TS, "badge": "X-1", "role": "nurse", "action": "lunch"},
            "wrong field",
        ),
        (
            TOPICS.staff_badge("first-aid"),
            {"seq": 1, "ts": TS, "badge": "", "role": "nurse", "action": "on"},
            "badge id is empty",
        ),
    ],
)
def test_inspector_and_badge_payloads_are_checked(
    tail: str, payload: dict[str, Any], expected: str
) -> None:
    assert rejected(tail, json.dumps(payload)).startswith(expected)


@pytest.mark.parametrize(
    "topic",
    [
        Topics("other-event").gate_count("north"),
        # deliberately malformed, so spelled by hand: one level too many, an unknown leaf
        f"{TOPICS.gate_count('north')}/extra",
        f"{PREFIX}/gate/north/total",
        TOPICS.status,
        "north/count",
    ],
)
def test_topics_that_are_not_inputs_are_rejected(topic: str) -> None:
    result = decode(PREFIX, SENSORS, topic, gate_payload())
    assert isinstance(result, Rejection)
    assert result.kind == "unknown"


def test_decode_never_raises_on_junk() -> None:
    for payload in (b"\x00" * 10, b"{" * 5000, b"1e999999", b'{"seq": 1e400}', "ü".encode()):
        assert isinstance(run(TOPICS.gate_count("north"), payload), Rejection)


# -- through the engine: rejections are counted and change no figure ---------------------

BAD_MESSAGES: list[tuple[str, bytes]] = [
    (TOPICS.gate_count("east"), gate_payload()),
    (TOPICS.gate_count("lot-a"), gate_payload()),
    (TOPICS.gate_count("north"), b'{"seq": 3,'),
    (TOPICS.gate_count("north"), gate_payload(seq=3, in_total="900")),
    (TOPICS.gate_count("north"), gate_payload(seq=3, out_total=...)),
    (TOPICS.gate_count("north"), gate_payload(seq=3, in_total=-5)),
    (TOPICS.gate_count("north"), gate_payload(seq=3, in_total=10**12)),
    (TOPICS.gate_count("north"), gate_payload(seq=3, in_total=True)),
    (TOPICS.gate_count("north"), gate_payload(seq=3, in_total=900.0)),
    (TOPICS.gate_count("north"), gate_payload(seq=3) + b" " * MAX_PAYLOAD_BYTES),
    (TOPICS.gate_count("north"), gate_payload(seq=3, ts="2027-07-04T12:00:00")),
    (TOPICS.availability("north"), b"sleeping"),
    (TOPICS.inspector("insp-1", "shout"), b'{"ts": "2027-07-04T12:00:00Z"}'),
    (TOPICS.inspector("insp-1", "adjust"), b'{"ts": "2027-07-04T12:00:00Z", "attendance": 9000}'),
    (TOPICS.inspector("insp-1", "ack"), b'{"ts": "2027-07-04T12:00:00Z", "alert": "A-9999"}'),
    (
        TOPICS.inspector("insp-1", "note"),
        b'{"ts": "2027-07-04T12:00:00Z", "text": "x", "alert": "A-9999"}',
    ),
    (
        TOPICS.inspector("insp-1", "inspection"),
        b'{"ts": "2027-07-04T12:00:00Z", "item": "Q(9)", "result": "ok"}',
    ),
]


def started_driver() -> Driver:
    d = Driver(permit_variant(QUICK))
    d.gate("north", local(12), 800, 100)
    d.gate("south", local(12), 300, 0)
    d.lot("lot-a", local(12), 200)
    d.staff(local(12), doctors=1, nurses=2, security=20)
    d.tick(local(12))  # let the alerts those first messages ended clear (clear_s = 0)
    assert d.status()["active_alerts"] == []
    return d


@pytest.mark.parametrize(("tail", "payload"), BAD_MESSAGES, ids=[t for t, _ in BAD_MESSAGES])
def test_a_rejected_message_is_counted_and_changes_no_figure(tail: str, payload: bytes) -> None:
    d = started_driver()
    before = d.status()
    alerts_before = d.engine.alerts
    result = d.feed(tail, payload, local(12))
    assert not result.accepted
    assert result.reason
    after = d.status()
    assert after["rejected"] == before["rejected"] + 1
    assert {**after, "rejected": before["rejected"]} == before
    assert d.engine.alerts == alerts_before


def test_falling_totals_with_a_rising_seq_are_a_restart_that_kept_its_seq() -> None:
    """Once refused for the rest of the day; now stitched as any restart (docs/protocol.md,
    "Counting"), and said: a counter-reset names it."""
    d = started_driver()
    result = d.gate("north", local(12), 790, 100)  # seq 2, in_total fell from 800
    assert result.accepted
    assert result.reason is not None
    assert result.reason.startswith("counter restarted keeping its seq (totals fell at seq 2")
    after = d.status()
    assert after["gates"]["north"]["restarts"] == 1
    assert (after["gates"]["north"]["in"], after["gates"]["north"]["out"]) == (1590, 200)
    assert [a["subject"] for a in d.alerts("counter-reset")] == ["north"]
    # the counter carries on from its new totals
    assert d.gate("north", local(12, 1), 810, 100).accepted
    assert d.status()["gates"]["north"]["in"] == 1610


def test_a_falling_out_total_is_a_restart_too() -> None:
    d = started_driver()
    assert d.gate("north", local(12), 800, 99).reason.startswith("counter restarted")  # type: ignore[union-attr]
    assert d.status()["attendance"]["exits"] == 199


def test_an_ack_for_an_unknown_alert_is_rejected() -> None:
    d = started_driver()
    result = d.inspector("insp-1", "ack", local(12), alert="A-0042", comment="seen")
    assert not result.accepted
    assert result.reason == "acknowledgement for unknown alert 'A-0042'"
    assert d.status()["rejected"] == 1


def test_rejections_accumulate() -> None:
    d = started_driver()
    for i, (tail, payload) in enumerate(BAD_MESSAGES, start=1):
        d.feed(tail, payload, local(12))
        assert d.status()["rejected"] == i
    assert d.status()["accepted"] == 26  # 2 gates, 1 lot, 23 badges


def test_a_rejected_message_never_moves_the_sensor_clock_backwards_or_forwards() -> None:
    d = started_driver()
    result = d.feed(d.topics.gate_count("north"), b"garbage", local(12), received=local(13))
    assert not result.accepted
    assert result.time == local(12)
    assert d.engine.now == local(12)
    five_s = (local(12) + timedelta(seconds=5)).isoformat()
    payload = gate_payload(seq=9, ts=five_s, in_total=801, out_total=100)
    later = d.feed(d.topics.gate_count("north"), payload, local(13))
    assert later.accepted
    assert later.time == local(12) + timedelta(seconds=5)


def test_two_permits_with_one_event_id_route_by_their_own_sensors() -> None:
    """The topic cache must not let one permit's sensor list leak into another's engine."""
    first = Driver(permit_variant())
    assert first.lot("lot-a", local(12), 5).accepted
    other = Driver(permit_variant({"lots": [{"id": "lot-z", "capacity": 10}]}))
    result = other.lot("lot-a", local(12), 5)  # must be refused, not raise KeyError
    assert not result.accepted
    assert result.reason == "lot 'lot-a' is not listed in the permit"
    assert other.lot("lot-z", local(12), 5).accepted
    assert first.lot("lot-a", local(12, 1), 6).accepted
    assert first.status()["lots"]["lot-a"]["occupied"] == 6


@pytest.mark.parametrize(
    ("payload", "sensor", "screen"),
    [
        (b"online", True, True),
        (b" offline\n", False, False),
        (b"ONLINE", None, True),  # a screen reads the aggregator's word in any case
        (b"Online \r\n", None, True),
        (b"maybe", None, False),  # a screen has no one to reject it to: offline
        (b"", None, False),
        (b"\xff\xfe", None, False),
        (b'"online"', None, False),
    ],
)
def test_availability_reads_strictly_for_a_sensor_and_anything_but_online_as_offline_on_screen(
    payload: bytes, sensor: bool | None, screen: bool
) -> None:
    assert wire.decode_sensor_availability(payload) is sensor
    assert wire.decode_availability(payload) is screen
    for online in (True, False):
        said = wire.encode_availability(online)
        assert wire.decode_sensor_availability(said) is wire.decode_availability(said) is online
    assert wire.encode_availability(False) == wire.AVAILABILITY_OFFLINE == b"offline"
