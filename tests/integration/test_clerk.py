"""The Town Clerk revokes the permit through a real broker to a real aggregator (permit:G).

`kent-ops clerk revoke` publishes the Clerk's message, and says "recorded" only once the
aggregator's status shows the change; the evidence log holds it, gates hold at 500, and
a change backdated more than a minute is refused by the command and by the aggregator.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from live_support import EVENT, TOPICS, Publisher, Watcher, permit_text, wait_until
from wire_support import clerk_permit, gate_count

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import read_records
from kent_ops.service.aggregator import Aggregator, Timing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]
FAST = Timing(heartbeat_s=0.5, snapshot_s=2, checkpoint_s=5, tick_s=0.1)


@pytest.fixture
def running(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher
) -> Iterator[tuple[Aggregator, Path]]:
    """A wall-clock aggregator inside a permitted window, 600 persons present."""
    permit_path = tmp_path / "permit.toml"
    permit_path.write_text(permit_text(window_now=True, pending_s=0.2, clear_s=0.2))
    evidence = tmp_path / "evidence.sqlite"
    aggregator = Aggregator(
        load_permit(permit_path), evidence, parse_broker_url(broker.url), timing=FAST
    )
    with aggregator:
        assert aggregator.connected.wait(10)
        yield aggregator, evidence


def clerk(broker: MosquittoBroker, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "clerk", *args, "--event", EVENT,
         "--broker", broker.url, "--clerk", "clerk-1", "--wait", "15"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_a_revocation_is_recorded_and_holds_every_gate_at_500(
    running: tuple[Aggregator, Path],
    broker: MosquittoBroker,
    watcher: Watcher,
    publisher: Publisher,
) -> None:
    _, evidence = running
    now = datetime.now(UTC).isoformat()
    publisher.send(TOPICS.gate_count("north"), gate_count(1, now, 600))
    watcher.status(lambda s: s["attendance"]["current"] == 600)
    done = clerk(broker, "revoke", "--resolution", "TB-2027-41", "--reason", "no doctor")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recorded: permit revoked from ")
    assert "TB-2027-41" in done.stdout
    status = watcher.status(lambda s: s["permit"]["status"] == "revoked")
    assert status["permit"]["resolution"] == "TB-2027-41"
    assert status["admit"] is False
    command = json.loads(watcher.wait_for(TOPICS.gate_command("north"), lambda b: b"false" in b))
    assert "the permit was revoked at " in command["reason"]
    assert command["reason"].endswith(": admit no one (permit:A)")
    # 600 present when it took effect, nobody admitted: the crowd's hour to disperse.
    wait_until(
        lambda: any(a["rule"] == "dispersing" for a in watcher.alerts().values()),
        15,
        "a dispersing alert",
    )
    assert not any(a["rule"] == "permit-required" for a in watcher.alerts().values())
    logged = [
        r for r in read_records(evidence) if r.kind == "message" and "/clerk/" in (r.topic or "")
    ]
    assert [(r.topic, r.accepted) for r in logged] == [(TOPICS.clerk_permit("clerk-1"), True)]


def test_a_backdated_revocation_is_refused_by_the_command_and_by_the_aggregator(
    running: tuple[Aggregator, Path],
    broker: MosquittoBroker,
    watcher: Watcher,
    publisher: Publisher,
) -> None:
    _, evidence = running
    two_minutes_ago = (datetime.now(UTC) - timedelta(minutes=2)).isoformat()
    done = clerk(broker, "revoke", "--resolution", "TB-1", "--effective-at", two_minutes_ago)
    assert done.returncode == 2
    assert "never backdated" in done.stderr
    assert "Traceback" not in done.stderr
    body = clerk_permit(datetime.now(UTC), "revoked", two_minutes_ago, "TB-1")
    publisher.send(TOPICS.clerk_permit("clerk-1"), body)
    watcher.status(lambda s: s["rejected"] == 1)
    assert watcher.status(lambda s: True)["permit"]["status"] == "issued"
    (record,) = [
        r for r in read_records(evidence) if r.kind == "message" and "/clerk/" in (r.topic or "")
    ]
    assert record.accepted is False
    assert "never backdated" in (record.reason or "")
