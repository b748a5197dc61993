"""Every kind of sensor in core/sensor_kinds/table.py has everything it needs, end to end.

A kind added to the table but not to one of the parts that reads it fails here, named:
its topic, its decoder, the permit's list of it, its counting state and liveness, the
snapshot, the broker's access list, the flood guard, the devices and the simulator, the
reference tally, the report and, for a kind a rented device may stand for, the adapter's
translation. docs/architecture.md, "A new sensor kind", is the recipe this checks.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, get_args

import pytest
from core.core_support import EVENT, local, permit_data, permit_text, permit_variant

from kent_ops.broker.acl import People, acl_text
from kent_ops.core import snapshot
from kent_ops.core.counting import Counting
from kent_ops.core.devices.reading import Reading
from kent_ops.core.devices.spec import SourceSpec
from kent_ops.core.devices.translate import DeviceState, translate
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit, PermitError, parse_permit
from kent_ops.core.permit import schema as permit_schema
from kent_ops.core.permit.places import READERS
from kent_ops.core.sensor_kinds import MANUAL_TALLY, SENSOR_KINDS, Figure, SensorKind
from kent_ops.core.wire import Decoded, Topics, decode, encode_payload, encode_reading, format_ts
from kent_ops.core.wire.topics import OTHER_KINDS, TopicRef
from kent_ops.report.collect import Collector, Samples
from kent_ops.service.flood import source_of
from sensors.device import Device
from sensors.scenario import generate
from sensors.tally import Tally

ENTRIES: tuple[SensorKind, ...] = (*SENSOR_KINDS, MANUAL_TALLY)
"""Every kind and flavour the table declares."""

EXAMPLES: dict[str, dict[str, Any]] = {
    "gate": {"in_total": 12, "out_total": 3},
    "lot": {"occupied": 40},
    "station": {"badge": "RN-0042", "role": "nurse", "action": "on"},
}
"""Each kind's reading as docs/protocol.md shows it (``seq`` and ``ts`` added here)."""

FIGURES: dict[str, Callable[[Counting], int]] = {
    "attendance": lambda c: c.attendance,
    "vehicles": lambda c: c.occupied_total,
    "staff": lambda c: sum(c.roster.counts.values()),
}
"""How each figure a kind may move is read off the counts."""

SAMPLED: dict[str, Callable[[Samples], int]] = {
    "attendance": lambda s: s.attendance_last[-1],
    "vehicles": lambda s: s.vehicles_last[-1],
    "staff": lambda s: s.doctors_last[-1] + s.nurses_last[-1],
}
"""Where the report's per-second samples keep each figure."""

RENTED: dict[str, tuple[dict[str, str], dict[str, int]]] = {
    "gate": ({"in": "people.in", "out": "people.out"}, {"in_": 7, "out": 2}),
    "lot": ({"occupied": "cars"}, {"occupied": 25}),
}
"""A ``json`` source for each kind a rented device may stand for, and what it reads."""

T0 = local(12)
TOPICS = Topics(EVENT)


@functools.cache
def _permit() -> Permit:
    """The example permit, its sensors silent for 20 s before they are stale (read once a
    test asks, so that a kind the permit cannot read fails tests, not their collection)."""
    return permit_variant({"alerting.stale_after_s": 20})


def _ids(entry: SensorKind) -> str:
    return entry.name + (f" ({entry.flavour})" if entry.flavour else "")


def _sensor(permit: Permit, entry: SensorKind) -> str:
    """A sensor of this kind (or flavour) in the example permit."""
    found = [s for s in permit.sensors if permit.sensor_kind(s) == entry]
    assert found, f"examples/permit.toml lists no {_ids(entry)}: add one"
    return found[0]


def _payload(entry: SensorKind, seq: int = 1, at: datetime = T0, key: bytes | None = None) -> bytes:
    body = {"seq": seq, "ts": format_ts(at), **EXAMPLES[entry.name]}
    return encode_payload(body, key)


@pytest.fixture(params=ENTRIES, ids=_ids)
def entry(request: pytest.FixtureRequest) -> SensorKind:
    return request.param


def test_every_kind_has_its_example_figure_and_sample_here() -> None:
    assert set(EXAMPLES) == {kind.name for kind in SENSOR_KINDS}
    assert set(FIGURES) == set(SAMPLED) == set(get_args(Figure))
    assert {k.name for k in SENSOR_KINDS if k.rentable} == set(RENTED)


def test_kinds_have_names_records_and_topics_of_their_own() -> None:
    for attr in ("name", "record", "permit_list", "payload"):
        values = [getattr(kind, attr) for kind in SENSOR_KINDS]
        assert len(set(values)) == len(values), f"two kinds share a {attr}"
    places = [(kind.area, kind.leaf) for kind in SENSOR_KINDS]
    assert len(set(places)) == len(places)
    assert not {kind.record for kind in SENSOR_KINDS} & set(OTHER_KINDS)


def test_its_topic_is_built_parsed_and_subscribed(entry: SensorKind) -> None:
    topic = TOPICS.reading(entry, "s-1")
    assert TOPICS.reading(entry.name, "s-1") == topic
    assert TOPICS.parse(topic) == TopicRef(entry.record, "s-1")
    assert entry.topic(TOPICS.prefix, "+") in TOPICS.inputs


def test_its_payload_is_decoded_signed_and_checked(entry: SensorKind) -> None:
    permit = _permit()
    sensor = _sensor(permit, entry)
    topic = TOPICS.reading(entry, sensor)
    decoded = decode(TOPICS.prefix, permit.sensors, topic, _payload(entry))
    assert isinstance(decoded, Decoded), decoded
    assert (decoded.kind, decoded.source) == (entry.record, sensor)
    assert type(decoded.record) is entry.payload
    keys = {sensor: b"k" * 32}
    signed = _payload(entry, key=keys[sensor])
    assert isinstance(decode(TOPICS.prefix, permit.sensors, topic, signed, keys), Decoded)
    unsigned = decode(TOPICS.prefix, permit.sensors, topic, _payload(entry), keys)
    assert not isinstance(unsigned, Decoded), "a kind's readings must be signed like the rest"
    negative = _payload(entry, seq=-1)
    assert not isinstance(decode(TOPICS.prefix, permit.sensors, topic, negative), Decoded)


def test_the_permit_lists_it_and_reads_its_entries(entry: SensorKind) -> None:
    permit = _permit()
    assert entry.name in permit_schema.SENSOR_LISTS
    assert entry.permit_list in permit_schema.KNOWN_TABLES
    assert entry.name in READERS
    sensor = _sensor(permit, entry)
    assert sensor in getattr(permit, entry.permit_list)
    assert permit.sensors[sensor] == entry.name


@pytest.mark.parametrize("entry", SENSOR_KINDS, ids=_ids)
def test_a_source_is_taken_only_where_a_rented_device_may_stand(entry: SensorKind) -> None:
    entries = [dict(e) for e in permit_data()[entry.permit_list]]
    paths = RENTED.get(entry.name, ({"in": "a", "out": "b"}, {}))[0]
    entries[0]["source"] = {"format": "json", "topic": "devices/x/up", **paths}
    text = permit_text({entry.permit_list: entries})
    if entry.rentable:
        assert entries[0]["id"] in parse_permit(text).sources
    else:
        with pytest.raises(PermitError, match=r"source: unknown field"):
            parse_permit(text)


def test_the_engine_counts_it_and_snapshots_it(entry: SensorKind) -> None:
    permit = _permit()
    engine = Engine(permit, clock="sensor")
    sensor = _sensor(permit, entry)
    read = FIGURES[entry.figure]
    before = read(engine.counts)
    result = engine.feed(TOPICS.reading(entry, sensor), _payload(entry), T0)
    assert result.accepted, result
    assert result.kind == entry.record
    assert read(engine.counts) != before, f"a {_ids(entry)} reading moved no {entry.figure}"
    again = engine.feed(TOPICS.reading(entry, sensor), _payload(entry), T0)
    assert again.accepted
    assert again.reason, "a repeated seq is a duplicate, with a note"
    restored = Engine.restore(permit, engine.snapshot(), clock="sensor")
    assert snapshot.differences(restored, engine.snapshot()) == []
    assert read(restored.counts) == read(engine.counts)


def test_its_silence_and_its_outage_are_judged_by_its_entry(entry: SensorKind) -> None:
    permit = _permit()
    sensor = _sensor(permit, entry)
    engine = Engine(permit, clock="sensor")
    engine.feed(TOPICS.availability(sensor), b"offline", T0)
    assert engine.counts.uncertain is entry.makes_uncertain
    engine = Engine(permit, clock="sensor")
    engine.feed(TOPICS.reading(entry, sensor), _payload(entry), T0)
    engine.tick(T0 + timedelta(seconds=permit.stale_after_s(sensor) + 1))
    assert engine.counts.sensors[sensor].stale is entry.heartbeats


def test_the_report_samples_its_figure(entry: SensorKind) -> None:
    permit = _permit()
    engine = Engine(permit, clock="sensor")
    sensor = _sensor(permit, entry)
    result = engine.feed(TOPICS.reading(entry, sensor), _payload(entry), T0)
    collector = Collector()
    collector.on_message(result, engine)
    collector.flush()
    assert len(collector.samples) == 1
    assert SAMPLED[entry.figure](collector.samples) == FIGURES[entry.figure](engine.counts)


def test_the_reference_tally_counts_it(entry: SensorKind) -> None:
    permit = _permit()
    sensor = _sensor(permit, entry)
    assert Tally(permit).feed(TOPICS.reading(entry, sensor), _payload(entry)) == "counted"


def test_the_broker_lets_its_sensor_and_only_its_sensor_write_it(entry: SensorKind) -> None:
    permit = _permit()
    sensor = _sensor(permit, entry)
    topics = TOPICS.sensor_topics(entry, sensor)  # its reading's, and its re-statement's
    assert topics[0] == TOPICS.reading(entry, sensor)
    assert len(topics) == len(entry.messages)
    text = acl_text(permit, People(simulator=True))
    writes = "".join(f"topic write {topic}\n" for topic in topics)
    own = f"user sensor-{sensor}\n{writes}topic write {TOPICS.availability(sensor)}\n"
    assert own in text
    simulator = text[text.index("user simulator") :]
    assert (writes in simulator) is entry.simulated
    for topic in topics:
        assert source_of(TOPICS.prefix, topic) == f"sensor-{sensor}"


def test_a_device_class_plays_it(entry: SensorKind) -> None:
    module, _, name = entry.device.rpartition(".")
    device = getattr(importlib.import_module(module), name)
    assert issubclass(device, Device)
    assert device.kind == entry.name


def test_the_simulator_plays_exactly_the_kinds_it_should() -> None:
    permit = _permit()
    played = {m.topic for m in generate(permit, "quiet", duration=1200)}
    for entry in ENTRIES:
        for sensor in permit.sensors:
            if permit.sensor_kind(sensor) != entry:
                continue
            heard = TOPICS.reading(entry, sensor) in played
            assert heard is entry.simulated, f"{sensor}: simulated {heard}, not {entry.simulated}"


@pytest.mark.parametrize("kind", [k for k in SENSOR_KINDS if k.rentable], ids=lambda k: k.name)
def test_a_rented_device_becomes_its_payload(kind: SensorKind) -> None:
    permit = _permit()
    paths, figures = RENTED[kind.name]
    spec = SourceSpec(
        sensor=_sensor(permit, kind),
        kind=kind.name,
        format="json",
        topic="devices/x/up",
        **{("in_" if k == "in" else k): v for k, v in paths.items()},
    )
    result = translate(spec, 100, DeviceState(), Reading(**figures, ts=T0), T0, digest="d")
    assert result.translated is not None, result.reason
    payload = encode_reading(result.translated)
    decoded = decode(TOPICS.prefix, permit.sensors, TOPICS.reading(kind, spec.sensor), payload)
    assert isinstance(decoded, Decoded), decoded
    assert type(decoded.record) is kind.payload
