"""The inspectors' hub's own state, fed what the broker would hand it: no broker needed.

The hub keeps the aggregator's clock when its status runs on the sensors' (one clock
for what the page stamps), hands each evidence checkpoint, as received, to the witness
that keeps them, and ignores what is not a valid record without stopping.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kent_ops.broker.client import BrokerAddress
from kent_ops.core import wire
from kent_ops.web.apps import AppConfig
from kent_ops.web.gate_link import Heard
from kent_ops.web.inspector_hub import InspectorHub, InspectorSettings, Person

EVENT = "kent-summer-fest-2027"
TOPICS = wire.Topics(EVENT)
SIMULATED = datetime(2027, 7, 4, 15, 0, tzinfo=UTC)


def hub(kept: list[bytes] | None = None) -> InspectorHub:
    """A hub not started: its connection is made but never opened."""
    apps = AppConfig(EVENT, BrokerAddress("127.0.0.1", 1))
    settings = InspectorSettings(witness=kept.append if kept is not None else None)
    return InspectorHub(
        apps, settings, Person("insp-1", "inspector", "inspector-insp-1", "pw", "s")
    )


def status(clock: str, ts: datetime) -> bytes:
    return wire.encode(
        wire.Status(ts=ts, event=EVENT, clock=clock, attendance=wire.Attendance(current=10))
    )


async def test_the_hubs_clock_is_the_aggregators_on_the_sensor_clock() -> None:
    h = hub()
    before = datetime.now(UTC)
    assert h.now() >= before  # the wall clock until a status says otherwise
    h._heard(Heard(TOPICS.status, status("sensor", SIMULATED)))
    assert h.now() == SIMULATED
    h._heard(Heard(TOPICS.status, status("sensor", SIMULATED - timedelta(minutes=5))))
    assert h.now() == SIMULATED, "never back"
    h._heard(Heard(TOPICS.status, status("wall", SIMULATED)))
    assert h.now() >= before
    message = h._message(h.view_text())
    assert '"sensor":false' in message


async def test_each_checkpoint_goes_to_the_witness_as_received() -> None:
    kept: list[bytes] = []
    h = hub(kept)
    payload = b'{"record": 1234, "hash": "' + b"ab" * 32 + b'", "ts": "2027-07-04T19:00:00Z"}'
    h._heard(Heard(TOPICS.checkpoint, payload))
    assert kept == [payload]
    assert h.checkpoint is not None
    assert (h.checkpoint.record, h.checkpoint.hash) == (1234, "ab" * 32)
    h._heard(Heard(TOPICS.checkpoint, b"not json"))  # kept as received, ignored after
    assert kept == [payload, b"not json"]
    assert h.checkpoint.record == 1234


async def test_bad_payloads_are_ignored_and_an_alert_cleared_is_forgotten() -> None:
    h = hub()
    h._heard(Heard(TOPICS.status, b"{"))
    h._heard(Heard(TOPICS.status, b'{"ts": "2027-07-04T15:00:00", "event": "e",'
                                  b' "attendance": {"current": 1}}'))  # fmt: skip
    assert h.status is None
    alert = wire.encode(wire.Alert(id="A-0001", rule="nurse-ratio"))
    h._heard(Heard(TOPICS.alert("A-0001"), alert))
    assert set(h.alerts) == {"A-0001"}
    h._heard(Heard(TOPICS.alert("A-0001"), b""))
    assert h.alerts == {}
