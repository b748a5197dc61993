"""Rented devices' formats and the translation into kent-ops payloads, from documented shapes.

The fixtures follow the documentation named in docs/protocol.md ("Rented devices"): The
Things Stack's data formats page (uplink messages), ChirpStack v4's ``UplinkEvent`` in its
Protobuf JSON mapping, and Milesight's VS13x decoder output.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from kent_ops.core.devices.formats import READERS
from kent_ops.core.devices.reading import Reading, Unreadable
from kent_ops.core.devices.source import SourceSpec
from kent_ops.core.devices.translate import DeviceState, translate
from kent_ops.core.permit import PermitError, parse_permit
from kent_ops.core.wire import Decoded, GateCount, LotOccupancy, Topics, decode, encode_reading
from kent_ops.core.wire.adapter import AdapterRaw, encode_raw
from kent_ops.report.devices import RentedDevices

RECEIVED = datetime(2027, 7, 4, 14, 30, tzinfo=UTC)
EXAMPLE = open("examples/permit.toml").read()  # noqa: SIM115 - read once for the module

# The Things Stack, "Data Formats", uplink message (abridged only where noted)
TTN_UPLINK = {
    "end_device_ids": {
        "device_id": "lot-a-sensor",
        "application_ids": {"application_id": "kent-parking"},
        "dev_eui": "0004A30B001C0530",
        "join_eui": "800000000000000C",
        "dev_addr": "00BCB929",
    },
    "correlation_ids": ["as:up:01E0S2A6T8KFNS0X3Z1R1WMRTV"],
    "received_at": "2027-07-04T14:29:59.400112345Z",
    "uplink_message": {
        "session_key_id": "AXA50...",
        "f_port": 1,
        "f_cnt": 87,
        "frm_payload": "AbQ=",
        "decoded_payload": {"free_spaces": 436, "battery": 3.6},
        "rx_metadata": [{"gateway_ids": {"gateway_id": "gw-kent-1"}, "rssi": -35, "snr": 5.2}],
        "settings": {"data_rate": {"lora": {"bandwidth": 125000, "spreading_factor": 7}}},
        "received_at": "2027-07-04T14:29:59.123456789Z",
        "consumed_airtime": "0.056576s",
    },
}

# ChirpStack v4, integration.UplinkEvent in the Protobuf JSON mapping
CHIRPSTACK_UP = {
    "deduplicationId": "3ac7e3c4-4401-4b8d-9386-a5c902f9202d",
    "time": "2027-07-04T14:29:58.000000+00:00",
    "deviceInfo": {
        "tenantId": "52f14cd4-c6f1-4fbd-8f87-4025e1d49242",
        "applicationId": "7d0c1b6e-8a3f-4c1e-9d51-0a2b3c4d5e6f",
        "deviceName": "north-counter",
        "devEui": "0004a30b001c1234",
    },
    "devAddr": "00189440",
    "fCnt": 12,
    "fPort": 1,
    "data": "AQID",
    "object": {"entries": 14.0, "exits": 3},
    "rxInfo": [{"gatewayId": "0016c001f153a14c", "rssi": -52, "snr": 13.75}],
}

# Milesight VS13x decoder output (SensorDecoders, VS_Series/VS13x)
VS13X_TOTALS = {
    "line_1_total_in": 72,
    "line_1_total_out": 200,
    "line_4_total_in": 5300,
    "line_4_total_out": 6797,
}
VS13X_PERIOD = {"line_1_period_in": 0, "line_1_period_out": 0, "line_4_period_in": 5}


def spec(kind: str = "gate", fmt: str = "json", **paths: str | int | None) -> SourceSpec:
    fields = {("in_" if k == "in" else k): v for k, v in paths.items()}
    return SourceSpec(sensor="north" if kind == "gate" else "lot-a", kind=kind, format=fmt,
                      topic="t", **fields)  # type: ignore[arg-type]  # fmt: skip


def read(s: SourceSpec, message: object) -> Reading | Unreadable:
    payload = message if isinstance(message, bytes) else json.dumps(message).encode()
    return READERS[s.format](s, "t", payload)


# -- formats --------------------------------------------------------------------------------


def test_ttn_v3_reads_the_decoded_payload_the_frame_counter_and_the_uplinks_time() -> None:
    r = read(spec("lot", "ttn-v3", free="free_spaces"), TTN_UPLINK)
    assert r == Reading(
        free=436, ts=datetime(2027, 7, 4, 14, 29, 59, 123456, tzinfo=UTC), counter=87
    )


def test_ttn_v3_takes_an_absent_f_cnt_as_frame_zero_as_the_stack_omits_zeros() -> None:
    message = json.loads(json.dumps(TTN_UPLINK))
    del message["uplink_message"]["f_cnt"]
    r = read(spec("lot", "ttn-v3", free="free_spaces"), message)
    assert isinstance(r, Reading)
    assert r.counter == 0


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ({"end_device_ids": {}, "join_accept": {}}, "not an uplink"),
        ({"uplink_message": {"f_cnt": 3}}, "no decoded_payload"),
        ({"uplink_message": {"decoded_payload": {"free_spaces": 1.5}}}, "not a whole number"),
        ({"uplink_message": {"decoded_payload": {"free_spaces": -1}}}, "negative"),
        ({"uplink_message": {"decoded_payload": {}}}, "no free field 'free_spaces'"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_ttn_v3_says_why_a_message_is_unreadable(message: object, words: str) -> None:
    r = read(spec("lot", "ttn-v3", free="free_spaces"), message)
    assert isinstance(r, Unreadable)
    assert words in r.reason


def test_chirpstack_v4_reads_object_fcnt_and_time_and_integral_floats_as_whole() -> None:
    r = read(spec("gate", "chirpstack-v4", in_delta="entries", out_delta="exits"), CHIRPSTACK_UP)
    assert r == Reading(
        in_=14, out=3, deltas=True, ts=datetime(2027, 7, 4, 14, 29, 58, tzinfo=UTC), counter=12
    )


def test_chirpstack_v4_without_a_codec_has_no_object_and_is_unreadable() -> None:
    message = {k: v for k, v in CHIRPSTACK_UP.items() if k != "object"}
    r = read(spec("gate", "chirpstack-v4", in_delta="entries", out_delta="exits"), message)
    assert isinstance(r, Unreadable)
    assert "no object" in r.reason


def test_milesight_reads_the_lines_totals_bare_or_inside_a_network_servers_envelope() -> None:
    s = spec(
        "gate", "milesight-vs13x", line=4, **{"in": "line_4_total_in", "out": "line_4_total_out"}
    )
    assert read(s, VS13X_TOTALS) == Reading(in_=5300, out=6797)
    wrapped = {**CHIRPSTACK_UP, "object": VS13X_TOTALS}
    r = read(s, wrapped)
    assert isinstance(r, Reading)
    assert (r.in_, r.out, r.counter) == (5300, 6797, 12)


def test_milesight_reads_a_period_only_message_as_deltas() -> None:
    s = spec(
        "gate", "milesight-vs13x", line=4, **{"in": "line_4_total_in", "out": "line_4_total_out"}
    )
    r = read(s, {**VS13X_PERIOD, "line_4_period_out": 7})
    assert r == Reading(in_=5, out=7, deltas=True)


def test_json_reads_dotted_paths_a_sequence_and_a_device_time() -> None:
    s = spec("gate", "json", **{"in": "c.in", "out": "c.out", "ts": "at", "seq": "n"})
    r = read(s, {"c": {"in": 5, "out": 1}, "at": "2027-07-04T10:00:00-04:00", "n": 9})
    assert r == Reading(in_=5, out=1, ts=datetime(2027, 7, 4, 14, tzinfo=UTC), counter=9)
    bad = read(s, {"c": {"in": 5, "out": 1}, "at": "2027-07-04T10:00:00", "n": 9})
    assert isinstance(bad, Unreadable)
    assert "no offset" in bad.reason


# -- translation ----------------------------------------------------------------------------


def _short(p: GateCount | LotOccupancy) -> tuple[int, ...]:
    if isinstance(p, GateCount):
        return (p.seq, p.in_total, p.out_total)
    return (p.seq, p.occupied)


def run(s: SourceSpec, readings: list[Reading | Unreadable], capacity: int = 0) -> list[object]:
    state = DeviceState()
    out: list[object] = []
    for i, reading in enumerate(readings):
        t = translate(s, capacity, state, reading, RECEIVED, digest=str(i))
        state = t.state
        out.append(t.reason if t.translated is None else [_short(p) for p in t.payloads])
    return out


def test_totals_with_a_frame_counter_repeat_and_restart() -> None:
    s = spec("gate", "ttn-v3", **{"in": "i", "out": "o"})
    got = run(s, [
        Reading(in_=10, out=1, counter=5),
        Reading(in_=30, out=4, counter=6),
        Reading(in_=30, out=4, counter=6),  # the network server delivered it twice
        Reading(in_=2, out=0, counter=0),  # the device rejoined: counts since its restart
        Reading(in_=9, out=1, counter=1),
    ])  # fmt: skip
    assert got[:2] == [[(1, 10, 1)], [(2, 30, 4)]]
    assert str(got[2]).startswith("redelivery")
    assert got[3] == [(0, 0, 0), (1, 2, 0)]  # a new run: the aggregator stitches it
    assert got[4] == [(2, 9, 1)]


def test_totals_that_go_on_across_a_frame_counter_reset_still_count_once() -> None:
    s = spec("gate", "ttn-v3", **{"in": "i", "out": "o"})
    got = run(s, [Reading(in_=10, out=1, counter=5), Reading(in_=12, out=1, counter=0)])
    assert got[1] == [(0, 0, 0), (1, 2, 0)]


def test_deltas_accumulate_and_json_without_a_sequence_takes_falling_totals_as_a_restart() -> None:
    deltas = spec("gate", "chirpstack-v4", in_delta="a", out_delta="b")
    got = run(deltas, [Reading(in_=3, out=0, deltas=True, counter=1),
                       Reading(in_=4, out=2, deltas=True, counter=2)])  # fmt: skip
    assert got == [[(1, 3, 0)], [(2, 7, 2)]]
    totals = spec("gate", "json", **{"in": "i", "out": "o"})
    got = run(totals, [Reading(in_=50, out=5), Reading(in_=60, out=5), Reading(in_=4, out=1)])
    assert got == [[(1, 50, 5)], [(2, 60, 5)], [(0, 0, 0), (1, 4, 1)]]


def test_falling_totals_without_a_restart_are_unreadable() -> None:
    s = spec("gate", "ttn-v3", **{"in": "i", "out": "o"})
    got = run(s, [Reading(in_=50, out=5, counter=7), Reading(in_=40, out=5, counter=8)])
    assert "totals fell without a restart" in str(got[1])


def test_a_lot_reads_free_as_capacity_minus_free_and_refuses_more_free_than_spaces() -> None:
    s = spec("lot", "ttn-v3", free="f")
    got = run(s, [Reading(free=436, counter=1), Reading(free=700, counter=2)], capacity=600)
    assert got[0] == [(1, 164)]
    assert "more than the lot's capacity 600" in str(got[1])


def test_a_broker_redelivery_without_a_counter_is_recognised_by_its_bytes() -> None:
    s = spec("gate", "json", in_delta="a", out_delta="b")
    first = translate(s, 0, DeviceState(), Reading(in_=2, out=0, deltas=True), RECEIVED, digest="x")
    again = translate(s, 0, first.state, Reading(in_=2, out=0, deltas=True), RECEIVED,
                      digest="x", redelivered=True)  # fmt: skip
    assert again.translated is None
    assert again.state == first.state


def test_a_payloads_time_never_goes_back() -> None:
    s = spec("gate", "json", **{"in": "i", "out": "o"})
    later = datetime(2027, 7, 4, 15, tzinfo=UTC)
    a = translate(s, 0, DeviceState(), Reading(in_=1, out=0, ts=later), RECEIVED, digest="1")
    b = translate(s, 0, a.state, Reading(in_=2, out=0), RECEIVED, digest="2")
    assert b.payloads[0].ts == a.payloads[0].ts == later


def test_a_translation_is_the_readings_a_native_device_would_send() -> None:
    s = spec("gate", "json", **{"in": "i", "out": "o"})
    at = datetime(2027, 7, 4, 14, 0, 5, 123456, tzinfo=UTC)  # the payload keeps milliseconds
    t = translate(s, 0, DeviceState(), Reading(in_=3, out=1, ts=at), RECEIVED, digest="1")
    assert t.translated == GateCount(seq=1, ts=at.replace(microsecond=123000), in_total=3,
                                     out_total=1)  # fmt: skip
    payload = encode_reading(t.translated)
    assert payload == (b'{"seq":1,"ts":"2027-07-04T14:00:05.123+00:00","in_total":3,"out_total":1}')
    decoded = decode(
        Topics("e").prefix, {"north": "gate"}, Topics("e").gate_count("north"), payload
    )
    assert isinstance(decoded, Decoded)
    assert decoded.record == t.translated


# -- the raw record on the aggregator's side -------------------------------------------------


# A raw record as `kent-ops adapt` has always written it: evidence logs hold these bytes.
STORED_RAW = (
    b'{"sensor":"lot-a","topic":"v3/up","payload_b64":"e30=","ts":"2027-07-04T14:30:00.000+00:00",'
    b'"translated":{"seq":4,"ts":"2027-07-04T14:29:59.400+00:00","occupied":164},"reason":null}'
)


def test_a_raw_record_keeps_its_stored_shape_and_reads_its_translation_typed() -> None:
    lot = LotOccupancy(seq=4, ts=datetime(2027, 7, 4, 14, 29, 59, 400000, tzinfo=UTC), occupied=164)
    raw = encode_raw("lot-a", "v3/up", b"{}", "2027-07-04T14:30:00.000+00:00", lot, None)
    assert raw == STORED_RAW
    record = decode(Topics("e").prefix, {"lot-a": "lot"}, Topics("e").adapter_raw("lot-a"), raw)
    assert isinstance(record, Decoded)
    assert isinstance(record.record, AdapterRaw)
    assert record.record.reading() == lot
    gate = GateCount(seq=2, ts=lot.ts, in_total=30, out_total=4)
    again = encode_raw("north", "t", b"{}", "2027-07-04T14:30:00Z", gate, None)
    assert decode(Topics("e").prefix, {"north": "gate"}, Topics("e").adapter_raw("north"),
                  again).record.reading() == gate  # fmt: skip


def test_the_aggregator_rejects_an_unreadable_raw_record_and_accepts_a_redelivery() -> None:
    prefix = Topics("e").prefix
    sensors = {"north": "gate"}
    topic = Topics("e").adapter_raw("north")
    bad = encode_raw("north", "t", b"\x00", "2027-07-04T14:30:00Z", None, "not valid JSON: x")
    rejected = decode(prefix, sensors, topic, bad)
    assert rejected.kind == "adapter-raw"
    assert "could not read north's message: not valid JSON" in rejected[1]
    repeat = encode_raw("north", "t", b"{}", "2027-07-04T14:30:00Z", None, "redelivery: again")
    assert decode(prefix, sensors, topic, repeat).__class__.__name__ == "Decoded"
    unlisted = decode(prefix, sensors, Topics("e").adapter_raw("west"), repeat)
    assert "sensor 'west' is not listed" in unlisted[1]


def test_the_reports_device_page_reads_a_stored_translation_as_its_reading() -> None:
    devices = RentedDevices()
    devices.take(7, RECEIVED, STORED_RAW)
    odd = STORED_RAW.replace(b'"occupied":164', b'"spaces":164')
    devices.take(8, RECEIVED, odd)
    tally = devices.sensors["lot-a"]
    assert (tally.received, tally.translated) == (2, 2)
    assert tally.first[0].translated == "seq 4: occupied 164"
    assert tally.first[1].translated.startswith("a translation that is no reading")


# -- the permit -----------------------------------------------------------------------------


def test_a_permit_without_sources_loads_as_before_and_a_source_is_read() -> None:
    assert parse_permit(EXAMPLE).sources == {}
    text = EXAMPLE.replace(
        'id = "lot-a"\ncapacity = 600\n',
        'id = "lot-a"\ncapacity = 600\nsource = { format = "ttn-v3", topic = "v3/a@ttn/devices/'
        's/up", free = "free_spaces", stale_after_s = 600 }\n',
    )
    permit = parse_permit(text)
    assert permit.sources["lot-a"].free == "free_spaces"
    assert permit.stale_after_s("lot-a") == 600
    assert permit.stale_after_s("lot-b") == permit.alerting.stale_after_s


def test_every_problem_of_a_source_is_listed_with_its_field() -> None:
    text = EXAMPLE.replace(
        'id = "south"\n', 'id = "south"\nsource = { format = "json", topic = "t", in = "a", '
        'occupied = "o", colour = "red" }\n',
    ).replace(
        'id = "lot-b"\ncapacity = 450\n',
        'id = "lot-b"\ncapacity = 450\nsource = { format = "chirpstack-v4", http = true, '
        'topic = "x", seq = "n" }\n',
    )  # fmt: skip
    with pytest.raises(PermitError) as err:
        parse_permit(text)
    problems = err.value.problems
    assert "gates[1].source.colour: unknown field" in problems
    assert (
        "gates[1].source.occupied: a gate counts persons in and out; occupied/free is a lot's"
        in problems
    )
    assert "gates[1].source.out: missing; a gate needs both in and out" in problems
    assert (
        "lots[1].source.http: a device either publishes on a topic or posts over HTTP" in problems
    )
    assert "lots[1].source.seq: a chirpstack-v4 source has its own frame counter" in problems
    assert any(
        p.startswith("lots[1].source: a lot needs exactly one of occupied or free")
        for p in problems
    )
