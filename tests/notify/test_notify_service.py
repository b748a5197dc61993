"""The notifier in-process against a real Mosquitto: it gives up in time, and says so plainly.

A channel whose mail server never answers is tried with growing delays until
``give_up_after_s``; then the notice is marked ``gave-up`` (a restart does not start
over) and the log says so, naming the person and the kind of channel, never the address.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from live_support import TOPICS, Publisher, permit_text, wait_until

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.core import wire
from kent_ops.core.permit import load_permit
from kent_ops.notify.config import parse_config
from kent_ops.notify.delivery import apprise_accepts
from kent_ops.notify.ledger import Ledger, NoticeKey
from kent_ops.notify.service import Notifier

pytestmark = pytest.mark.integration
ADDRESS = "jones.the.inspector@kent-ny.example"
PASSWORD = "Sw0rdfish-99"


def collect_sent(broker: MosquittoBroker) -> tuple[Any, list[dict[str, Any]]]:
    """A real subscriber to the sent records; returns (client, the records as they come)."""
    got: list[dict[str, Any]] = []
    ready = threading.Event()
    client = make_client(parse_broker_url(broker.url))
    client.on_connect = lambda c, *a: c.subscribe(TOPICS.notifier_sent("+"), qos=1)
    client.on_subscribe = lambda *a: ready.set()
    client.on_message = lambda c, u, msg: got.append(json.loads(msg.payload))
    client.connect(broker.host, broker.port)
    client.loop_start()
    assert ready.wait(10)
    return client, got


@pytest.mark.slow
def test_a_channel_that_never_answers_is_given_up_after_give_up_after_s(
    tmp_path: Path, broker: MosquittoBroker, publisher: Publisher, caplog: pytest.LogCaptureFixture
) -> None:
    (permit_path := tmp_path / "permit.toml").write_text(permit_text())
    url = f"mailto://mailer:{PASSWORD}@127.0.0.1:{free_port()}?from=ops@kent.example&to={ADDRESS}"
    config = parse_config(
        {
            "state_file": "sent.json",
            "retry": {"first_delay_s": 0.2, "max_delay_s": 0.5, "give_up_after_s": 1.5},
            "people": [{"id": "insp-2", "channels": [url]}],
        },
        tmp_path,
        apprise_accepts,
    )
    ledger = Ledger.load(config.state_file)
    client, sent = collect_sent(broker)
    key = NoticeKey("A-0007", "active", "insp-2", 1)
    alert = wire.Alert(id="A-0007", rule="doctor-on-duty", since=datetime.now(UTC))
    notifier = Notifier(load_permit(permit_path), config, parse_broker_url(broker.url), ledger)
    try:
        with caplog.at_level(logging.DEBUG), notifier:
            assert notifier.subscribed.wait(10)
            publisher.client.publish(TOPICS.alert("A-0007"), wire.encode(alert), qos=1, retain=True)
            wait_until(lambda: ledger.status(key) == "gave-up", 30, "the notice to be given up")
            wait_until(lambda: len(sent) >= 2, 10, "the failed attempts' sent records")
    finally:
        client.disconnect()
        client.loop_stop()
    assert Ledger.load(config.state_file).status(key) == "gave-up"  # a restart won't retry
    assert all((r["ok"], r["to"], r["channel"]) == (False, "insp-2", "mailto") for r in sent)
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("gave up telling insp-2 #1 (mailto) about A-0007") for line in lines)
    for text in [*lines, *map(json.dumps, sent)]:
        assert ADDRESS not in text
        assert "jones" not in text
        assert PASSWORD not in text
    assert not [r for r in caplog.records if r.name.startswith("apprise")]


def test_the_notifiers_session_id_is_a_secret_no_other_account_can_name(tmp_path: Path) -> None:
    """A guessable id would let any account take or wipe the notifier's queued alerts."""
    (permit_path := tmp_path / "permit.toml").write_text(permit_text())
    config = parse_config(
        {"state_file": "sent.json", "people": [{"id": "insp-2", "channels": ["json://x"]}]},
        tmp_path,
        apprise_accepts,
    )
    permit = load_permit(permit_path)
    ledger = Ledger.load(config.state_file)
    address = parse_broker_url(f"mqtt://127.0.0.1:{free_port()}")
    first = Notifier(permit, config, address, ledger).client._client_id.decode()
    again = Notifier(permit, config, address, ledger).client._client_id.decode()
    assert first == again  # the same every start: the session survives a restart
    assert first.startswith(f"kent-ops-notify-{config.id}-{permit.event_id}-")
    assert first != f"kent-ops-notify-{config.id}"
    key = tmp_path / f"kent-ops-{permit.event_id}.notify-{config.id}.session-key"
    assert key.stat().st_mode & 0o777 == 0o600
