"""What a SIGKILL of the field broker loses: fewer messages than its saves are apart.

A real Mosquitto with the field brokers' persistence (``persistence true`` and
:data:`kent_ops.broker.persistence.FIELD_AUTOSAVE`, the lines
``deploy/mosquitto/kent-ops-field.conf`` and ``kent-ops deploy bridge`` carry, held
there by tests/broker/test_persistence.py), its saves written to its log. As the loss
was first reproduced: the aggregator's persistent session is subscribed, then the
aggregator crashes (systemd restarts it); badge scans from two real badge readers and
readings of a real gate counter (``sensors/``) are sent at QoS 1 and acknowledged, and
the broker saves now and then; it is SIGKILLed between two saves (not during one) and
restarted. The aggregator's session comes back and takes what the broker kept. Counted,
not timed: every message acknowledged before the kill reaches the session, but for
the newest ones, fewer than
:data:`~kent_ops.broker.persistence.AUTOSAVE_CHANGES` (docs/security.md, "The field
broker's window"; benchmarks/broker_window.py measures it at a festival's rate).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge_support import Journal, Subscriber, attach, settled

from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.broker.persistence import AUTOSAVE_CHANGES, FIELD_AUTOSAVE
from kent_ops.core.wire import Topics
from sensors.badge_reader import BadgeReader
from sensors.gate_counter import GateCounter

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
AGGREGATOR = "kent-ops-aggregator-window-test"
SAVED = "Saving in-memory database"


@pytest.fixture
def field_broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """A Mosquitto saving as the field brokers do, each save written to its log."""
    broker = MosquittoBroker(
        tmp_path / "broker", autosave=FIELD_AUTOSAVE, extra_config="log_type information\n"
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def saves(broker: MosquittoBroker) -> int:
    return (broker.workdir / "mosquitto.log").read_text().count(SAVED)


def kill_and_restart(broker: MosquittoBroker) -> None:
    """SIGKILL, as a power cut or the OOM killer: no save on the way out."""
    assert broker.process is not None
    broker.process.kill()
    broker.process.wait(10)
    broker.process = None
    broker.start()


def test_a_kill_between_saves_loses_fewer_acknowledged_messages_than_the_saves_are_apart(
    field_broker: MosquittoBroker,
) -> None:
    address = BrokerAddress(field_broker.host, field_broker.port)
    aggregator = Subscriber(address, TOPICS.everything, client_id=AGGREGATOR, clean_start=False)
    aggregator.close()  # it crashed: systemd is restarting it, the broker holds its session
    journal = Journal()
    first_aid = BadgeReader(EVENT, "first-aid")
    medical_tent = BadgeReader(EVENT, "medical-tent")
    north = GateCounter(EVENT, "north", heartbeat_s=None)
    links = [attach(device, journal, address) for device in (first_aid, medical_tent, north)]
    try:
        # Three and a half saves' worth: the broker saves several times, and the kill
        # comes after the last of them.
        for n in range(3 * AUTOSAVE_CHANGES + AUTOSAVE_CHANGES // 2):
            if n % 3 == 0:
                assert first_aid.scan(f"RN-{n:04d}", "nurse", "on")
            elif n % 3 == 1:
                assert medical_tent.scan(f"MD-{n:04d}", "doctor", "on")
            else:
                assert north.count(entered=1)
        assert journal.all_acknowledged(30), "the broker did not acknowledge every message"
        settled(address)  # not in the middle of a save: the kill falls between two
        sent = [(s.topic, s.payload) for s in journal.sent if not s.topic.endswith("availability")]
        saved_before_kill = saves(field_broker)
        assert saved_before_kill >= 3, "the broker did not save while the messages came"

        kill_and_restart(field_broker)
        aggregator = Subscriber(address, TOPICS.everything, client_id=AGGREGATOR, clean_start=False)
        # One more scan once the reader is back: it comes after all the broker kept.
        assert links[0].wait_online(30), "the badge reader did not reconnect"
        assert first_aid.scan("RN-LAST", "nurse", "off")
        marker = journal.sent[-1]
        aggregator.wait_for(
            lambda: (marker.topic, marker.payload) in aggregator.received(),
            30,
            "the scan made after the restart",
        )
        received = set(aggregator.received())
    finally:
        aggregator.close()
        for device in (first_aid, medical_tent, north):
            device.close(timeout=2)

    lost = [m for m in sent if m not in received]
    for topic in {t for t, _ in sent}:  # each device's connection keeps its own order
        of_device = [m for m in sent if m[0] == topic]
        kept = [m for m in of_device if m in received]
        assert kept == of_device[: len(kept)], f"{topic}: an older message lost, a newer kept"
    assert len(lost) < AUTOSAVE_CHANGES, f"{len(lost)} of {len(sent)} acknowledged messages lost"
    print(
        f"\nSIGKILL after {saved_before_kill} saves, saving every {AUTOSAVE_CHANGES} changes: "
        f"{len(lost)} of {len(sent)} acknowledged messages lost"
    )
