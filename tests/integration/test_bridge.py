"""A remote property behind a dropping link, with two real Mosquitto brokers.

The property's broker runs the configuration ``kent-ops deploy bridge`` generates; the
command post's broker runs TLS, passwords and the ACL ``kent-ops deploy acl --bridge``
generates, with a real aggregator on it. Real gate counters, a deputy's tally and a
badge reader on the property publish throughout while the command post is away for
20 s and the property's broker is restarted cleanly in the middle of it: afterwards
every reading is in the evidence log exactly once and the figures are those of a run
without the outage. A ``kill -9`` of the property's broker mid-outage is measured too.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from bridge_support import (
    PROPERTY,
    TOPICS,
    Journal,
    Site,
    Subscriber,
    attach,
    build_site,
    settled,
    two_property_permit,
)
from live_support import until

from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.gate.app import make_gate_app
from dashboards.gate.widgets.order_sign import OrderSign
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import TopicRef
from kent_ops.evidence.log import verify
from kent_ops.service.aggregator import Aggregator, Timing
from sensors.badge_reader import BadgeReader
from sensors.device import Device
from sensors.gate_counter import GateCounter

pytestmark = pytest.mark.integration

FAST = Timing(heartbeat_s=0.5, snapshot_s=1.0, checkpoint_s=2.0, tick_s=0.2)
STATE = TOPICS.bridge_state(PROPERTY)
OUTAGE_S = 20.0


@pytest.fixture
def permit(tmp_path: Path) -> Permit:
    return load_permit(two_property_permit(tmp_path))


@pytest.fixture
def site(tmp_path: Path, permit: Permit) -> Iterator[Site]:
    s = build_site(tmp_path, permit)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def link_state(site: Site) -> Iterator[Subscriber]:
    """The bridge's state as the property's screens see it, on the property's broker."""
    sub = Subscriber(site.property_address("dashboard"), STATE)
    sub.wait_latest(STATE, b"1")
    yield sub
    sub.close()


def evidence_messages(path: Path) -> list[tuple[str, bytes, str | None]]:
    """Every message the aggregator recorded: topic, bytes, and why it changed nothing."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT topic, payload, reason FROM records WHERE kind = 'message' ORDER BY id"
        ).fetchall()
    finally:
        conn.close()
    return [(t, bytes(p), r) for t, p, r in rows]


def firsts(messages: Iterable[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """Each message once, where it first came (a QoS 1 redelivery repeats it later)."""
    return list(dict.fromkeys(messages))


def label(message: tuple[str, bytes]) -> str:
    """A reading as ``sensor#seq``: what an order mismatch is read in."""
    topic, payload = message
    return f"{topic.split('/')[3]}#{msgspec.json.decode(payload)['seq']}"


def is_reading(topic: str) -> bool:
    """A count, an occupancy or a badge scan: what the figures are made of."""
    ref = TOPICS.parse(topic)
    return isinstance(ref, TopicRef) and ref.kind in ("gate", "lot", "badge")


def figures(status: Any) -> dict[str, Any]:
    """The counts a status reports: what an outage must not change."""
    s = status if isinstance(status, dict) else msgspec.to_builtins(status)
    return {
        "attendance": {k: s["attendance"][k] for k in ("current", "entries", "exits")},
        "gates": {g: (v["in"], v["out"], v["restarts"]) for g, v in s["gates"].items()},
        "properties": {p: v["attendance"] for p, v in s["properties"].items()},
        "staff": (
            s["medical"]["doctors_on_duty"],
            s["medical"]["nurses_on_duty"],
            s["security"]["on_duty"],
        ),
    }


class Crowd:
    """Persons through the gates and staff badging at the aid station, every 30 ms."""

    def __init__(self, gates: list[GateCounter], badges: BadgeReader, seed: int = 7) -> None:
        self.gates, self.badges = gates, badges
        self.rng = random.Random(seed)
        self.on_duty: dict[str, bool] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._walk, name="crowd", daemon=True)

    def _walk(self) -> None:
        roles = {"nurse-1": "nurse", "nurse-2": "nurse", "doc-1": "doctor", "guard-1": "security"}
        while not self.stop.wait(0.03):
            gate = self.rng.choice(self.gates)
            present = gate.in_total - gate.out_total
            gate.count(entered=self.rng.randrange(1, 4), exited=min(present, self.rng.randrange(2)))
            if self.rng.random() < 0.1:
                badge = self.rng.choice(sorted(roles))
                on = not self.on_duty.get(badge, False)
                self.on_duty[badge] = on
                self.badges.scan(badge, roles[badge], "on" if on else "off")

    def __enter__(self) -> Crowd:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)


def uninterrupted(permit: Permit, readings: list[tuple[str, bytes]]) -> dict[str, Any]:
    """The figures of the same readings, in the same order, with no outage and no bridge."""
    engine = Engine(permit, clock="wall")
    now = datetime.now(UTC)
    for topic, payload in readings:
        engine.feed(topic, payload, now)
    return figures(engine.status())


@dataclass
class Run:
    """What a run through the outage sent, what the property's broker got, what was shown."""

    sent: list[tuple[str, bytes]]
    """Every message the devices handed to their MQTT client, in order."""
    at_property: list[tuple[str, bytes]]
    """The property's readings in the order its broker took them: what the bridge must keep."""
    live: dict[str, Any]
    """The command post's last status."""
    final: dict[str, tuple[int, int]]
    """Each gate counter's own totals at the end."""

    def expected(self, permit: Permit) -> dict[str, Any]:
        """An uninterrupted run: the property's readings as its broker took them, and north's."""
        here = set(self.at_property)
        direct = [m for m in self.sent if is_reading(m[0]) and m not in here and "/north/" in m[0]]
        return uninterrupted(permit, self.at_property + direct)


def through_the_outage(site: Site, permit: Permit, evidence: Path, link_state: Subscriber) -> Run:
    """Sensors count throughout; the post is away 20 s; the property's broker restarts."""
    agg = Aggregator(permit, evidence, site.central_address("kent-ops-aggregator"), timing=FAST)
    agg.start()
    journal = Journal()
    here = {g: GateCounter(permit.event_id, g, heartbeat_s=None) for g in
            ("meadow-road", "field-to-meadow", "meadow-road-manual")}  # fmt: skip
    north = GateCounter(permit.event_id, "north", heartbeat_s=None)
    badges = BadgeReader(permit.event_id, "camp-aid")
    devices: list[Device] = [*here.values(), north, badges]
    # A persistent session on the property's broker sees its readings in its own order.
    local = Subscriber(
        site.property_address("dashboard"), TOPICS.everything, client_id="order", clean_start=False
    )
    watcher: Subscriber | None = None
    try:
        assert agg.connected.wait(15), "the aggregator did not connect"
        for gate, device in here.items():
            user = "deputy-meadow-road" if gate.endswith("-manual") else f"sensor-{gate}"
            attach(device, journal, site.property_address(user))
        attach(badges, journal, site.property_address("sensor-camp-aid"))
        attach(north, journal, site.central_tls("sensor-north"), site.ca_file)
        with Crowd([*here.values(), north], badges):
            time.sleep(2)
            site.central.stop()  # the link drops: the command post is out of reach
            link_state.wait_latest(STATE, b"0")
            time.sleep(OUTAGE_S / 2)
            site.prop.restart()  # a clean restart of the property's broker, mid-outage
            time.sleep(OUTAGE_S / 2)
            site.central.start()
            link_state.wait_latest(STATE, b"1", timeout=60)
            time.sleep(2)
        final = {d.sensor_id: (d.in_total, d.out_total) for d in [*here.values(), north]}
        assert journal.all_acknowledged(60), "a device's message was never acknowledged"
        with journal.lock:
            sent = [(m.topic, m.payload) for m in journal.sent]
        readings_here = {m for m in sent if is_reading(m[0]) and "/north/" not in m[0]}

        def at_property() -> list[tuple[str, bytes]]:
            return [m for m in firsts(local.received()) if m in readings_here]

        local.wait_for(lambda: len(at_property()) == len(readings_here), 30, "the local order")
        watcher = Subscriber(site.central_address("dashboard"), TOPICS.status)
        watcher.wait_for(
            lambda: (
                (s := watcher.status()) is not None
                and {g: (s["gates"][g]["in"], s["gates"][g]["out"]) for g in final} == final
            ),
            60,
            "the command post's figures to catch up",
        )
        live = watcher.status()
        assert live is not None
    finally:
        for device in devices:
            device.close(timeout=2)
        agg.stop()
        assert agg.wait(30)
        for client in (local, watcher):
            if client is not None:
                client.close()
    assert agg.failure is None
    return Run(sent, at_property(), live, final)


@pytest.mark.timeout(240)
@pytest.mark.slow
def test_an_outage_and_a_restart_of_the_propertys_broker_lose_nothing(
    tmp_path: Path, permit: Permit, site: Site, link_state: Subscriber
) -> None:
    """Nothing lost, nothing counted twice, the bridge's order kept, the same figures.

    Each hop is QoS 1: a broker that stops between handing a message on and hearing it
    was taken hands it on again when it returns. The aggregator records such a copy
    too (nothing received goes unrecorded), as "already counted"; it moves no figure.
    """
    evidence = tmp_path / "evidence.sqlite"
    run = through_the_outage(site, permit, evidence, link_state)
    logged = evidence_messages(evidence)
    readings = [m for m in run.sent if is_reading(m[0])]
    assert len(set(readings)) == len(readings)  # seq makes every reading unique
    logged_readings = [(t, p) for t, p, _ in logged if is_reading(t)]
    # Every reading is in the evidence log, and nothing that was not sent.
    assert set(logged_readings) == set(readings)
    # A second copy of a reading is a redelivery, recorded as changing nothing, in the
    # same words whether it came from a gate counter or a badge reader (whichever of
    # them the broker happened to hand on again first).
    seen: set[tuple[str, bytes]] = set()
    repeats = 0
    for topic, payload, reason in logged:
        if is_reading(topic) and (topic, payload) in seen:
            repeats += 1
            seq = json.loads(payload)["seq"]
            assert reason is not None, (topic, payload)
            assert re.fullmatch(rf"seq {seq} already counted \(last \d+\)", reason), reason
        seen.add((topic, payload))
    # The bridge keeps the order in which the property's broker took its readings.
    here = set(run.at_property)
    in_log = [m for m in firsts(logged_readings) if m in here]
    assert [label(m) for m in in_log] == [label(m) for m in run.at_property]
    # Availability is a retained state: every change is there; a bridge or aggregator
    # reconnection may repeat the current one (the same bytes), never invent one.
    availability = {m for m in run.sent if "/availability" in m[0]}
    assert availability <= {(t, p) for t, p, _ in logged if "/availability" in t}
    # The figures are those of a run without the outage.
    assert run.expected(permit) == figures(run.live)
    assert {g: (run.live["gates"][g]["in"], run.live["gates"][g]["out"]) for g in run.final} == (
        run.final
    )
    assert verify(evidence).ok
    print(
        f"\n{len(readings)} readings ({len(run.at_property)} over the bridge), every one in "
        f"the evidence log; {repeats} QoS 1 redeliveries recorded as already counted"
    )


@pytest.mark.timeout(180)
@pytest.mark.slow
def test_the_bridge_keeps_the_order_of_each_sensors_readings_across_reconnections(
    permit: Permit, site: Site, link_state: Subscriber
) -> None:
    """A reading arriving while the bridge reconnects must not overtake the held backlog.

    The aggregator takes a reading whose ``seq`` is not after the last one as already
    counted: harmless for running totals, but a badge scan overtaken by a later one
    would be lost. Mosquitto with no in-flight bound reorders here at every
    reconnection; the generated configuration bounds it.
    """
    topic = TOPICS.gate_count("meadow-road")
    post = Subscriber(
        site.central_address("kent-ops-aggregator"), topic, client_id="order", clean_start=False
    )
    journal = Journal()
    gate = GateCounter(permit.event_id, "meadow-road", heartbeat_s=None)
    stop = threading.Event()

    def walk() -> None:
        while not stop.wait(0.01):
            gate.count(entered=1)

    walker = threading.Thread(target=walk, name="walker", daemon=True)
    try:
        attach(gate, journal, site.property_address("sensor-meadow-road"))
        walker.start()
        for _ in range(4):
            time.sleep(1)
            site.central.stop()
            link_state.wait_latest(STATE, b"0")
            time.sleep(1)
            site.central.start()
            link_state.wait_latest(STATE, b"1", timeout=60)
        time.sleep(1)
        stop.set()
        walker.join(5)
        assert journal.all_acknowledged(30)
        post.wait_for(
            lambda: (
                (last := post.latest(topic)) is not None
                and msgspec.json.decode(last)["seq"] == gate.seq
            ),
            60,
            "the last reading at the command post",
        )
    finally:
        stop.set()
        gate.close(timeout=2)
        post.close()
    seqs = [msgspec.json.decode(p)["seq"] for t, p in firsts(post.received()) if t == topic]
    assert seqs == sorted(seqs)
    assert seqs == list(range(seqs[0], gate.seq + 1))  # and none missing


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_a_kill_9_mid_outage_loses_only_what_arrived_since_the_last_save(
    permit: Permit, site: Site, link_state: Subscriber
) -> None:
    """What the town trades for not writing every message to disk: measured, stated.

    The property's broker saves its memory after every ``autosave_changes`` changes (a
    reading held for the command post is one); a SIGKILL (or a power cut) loses what it
    acknowledged since the last save: fewer than that many. Never an older message,
    never one twice: what survives is the oldest part, in order. The gate counter's
    running totals come back with its reconnection; the readings lost in between are a
    gap in its ``seq``.
    """
    changes = site.settings.autosave_changes
    topic = TOPICS.gate_count("meadow-road")
    # A persistent session at the command post stands in for the aggregator.
    post = Subscriber(
        site.central_address("kent-ops-aggregator"), topic, client_id="kill-9", clean_start=False
    )
    journal = Journal()
    gate = GateCounter(permit.event_id, "meadow-road", heartbeat_s=None)
    try:
        attach(gate, journal, site.property_address("sensor-meadow-road"))
        site.central.stop()
        link_state.wait_latest(STATE, b"0")
        # Three and a half saves' worth of readings: saves fall inside, the kill between two.
        during: list[int] = []
        for _ in range(3 * changes + changes // 2):
            assert gate.count(entered=1)
            during.append(gate.seq)
        assert journal.all_acknowledged(30)  # the property's broker has every one
        settled(site.property_address("sensor-meadow-road"))  # the kill is not mid-save
        site.prop.kill()
        site.prop.start()
        site.central.start()
        link_state.wait_latest(STATE, b"1", timeout=60)

        def totals_back() -> bool:
            # The reconnection's own reading (the next seq), not merely the same totals: the
            # last reading of the outage, if it was saved, already carries them.
            last = post.latest(topic)
            if last is None:
                return False
            reading = msgspec.json.decode(last)
            return reading["seq"] > during[-1] and reading["in_total"] == gate.in_total

        post.wait_for(totals_back, 60, "the counter's totals at the command post")
    finally:
        gate.close(timeout=2)
        post.close()
    seqs = [msgspec.json.decode(p)["seq"] for t, p in post.received() if t == topic]
    *kept, back = seqs
    assert back == during[-1] + 1  # the reconnection's totals, with the next seq
    assert kept[0] < during[0]  # the reading sent on connecting, before the outage
    kept = [q for q in kept if q >= during[0]]
    assert kept == during[: len(kept)]  # the oldest, in order, each once
    assert kept, "nothing saved before the kill: no autosave in three and a half saves' worth"
    lost = during[len(kept) :]
    assert len(lost) < changes, f"{len(lost)} acknowledged readings lost"
    print(
        f"\nkill -9 saving every {changes} changes: {len(lost)} of {len(during)} acknowledged "
        "readings lost; the counter's totals came back with its reconnection"
    )


@pytest.mark.timeout(120)
async def test_a_gate_view_on_the_property_keeps_its_order_and_says_the_post_is_unreachable(
    tmp_path: Path, permit: Permit, site: Site, link_state: Subscriber
) -> None:
    """The deputy at the meadow road, on the property's broker, through a link outage."""
    agg = Aggregator(
        permit,
        tmp_path / "evidence.sqlite",
        site.central_address("kent-ops-aggregator"),
        timing=FAST,
    )
    agg.start()
    try:
        assert agg.connected.wait(15), "the aggregator did not connect"
        app = make_gate_app(
            "meadow-road",
            permit.event_id,
            site.property_address("deputy-meadow-road"),
            state_dir=tmp_path / "tally",
        )
        async with app.run_test(size=(100, 30)) as pilot:
            sign = app.screen.query_one(OrderSign)
            await until(pilot, lambda: sign.order.word == "ADMIT", within=30)
            await until(pilot, lambda: app.problem is None, within=30)
            site.central.stop()  # the radio link drops
            await until(
                pilot,
                lambda: (app.problem or "").startswith("Command post unreachable since"),
                within=30,
            )
            banner = app.screen.query_one(ConnectionBanner)
            await pilot.pause()
            assert banner.has_class("-shown")
            assert sign.order.word == "ADMIT"  # the last order, still on the screen
            site.central.start()  # the link is back
            await until(pilot, lambda: app.problem is None, within=60)
            assert sign.order.word == "ADMIT"
            assert not banner.has_class("-shown")
    finally:
        agg.stop()
        assert agg.wait(30)
    assert agg.failure is None
