"""The ``seq`` games that once froze a gate while it read "online", against real processes:
a real Mosquitto, a real ``kent-ops run`` on the wall clock, real gate counters from
``sensors/`` (and, for a deputy's tally, its messages as the tally sends them).

- one reading with ``seq`` 2^31+11 froze a gate for the day: now refused, with its reason,
  and the gate counts on;
- a counter that restarts keeping its ``seq`` but losing its totals was refused for good:
  now stitched (``counter-reset``);
- a tally whose first message after a reboot was lost was frozen: now stitched, and the
  lost number named (``sensor-gap``);
- a device with a 1970 clock rebooting twice lost 50 persons on the wall clock: its own
  clock no longer decides which run a reading belongs to.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from live_support import TOPICS, Publisher, Watcher, write_permit
from wire_support import gate_count

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.evidence.log import read_records
from sensors.gate_counter import GateCounter

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

EVENT = TOPICS.event_id
GATES = ("north", "south", "east", "north-manual")


def counter(gate: str, broker: MosquittoBroker, **options: Any) -> GateCounter:
    device = GateCounter(EVENT, gate, **options)
    device.connect(parse_broker_url(broker.url))
    assert device.wait_online(15)
    return device


def sent(device: GateCounter) -> None:
    link = device._link
    assert link is not None
    assert link.flush(10)  # type: ignore[attr-defined]


def test_the_seq_games_neither_freeze_a_gate_nor_lose_a_person(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    permit = write_permit(tmp_path, window_now=True, gates=GATES)
    evidence = tmp_path / "evidence.sqlite"
    log = tmp_path / "run.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kent_ops", "run", "--permit", str(permit),
         "--evidence", str(evidence), "--broker", broker.url, "--clock", "wall"],
        stdout=subprocess.DEVNULL, stderr=log.open("ab"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online", 30)

        # 1. north: one reading with seq 2^31+11 between its own.
        north = counter("north", broker)
        for _ in range(3):
            north.count(10)
        sent(north)
        publisher.send(TOPICS.gate_count("north"),
                       gate_count(2**31 + 11, datetime.now(UTC), 9999, 0))  # fmt: skip
        for _ in range(2):
            north.count(10)
        sent(north)

        # 2. south: a counter that restarts keeping its seq but losing its totals.
        state = tmp_path / "south.json"
        south = counter("south", broker, state_file=state)
        south.count(300)
        sent(south)
        south.close(announce=False)
        kept = json.loads(state.read_text())
        state.write_text(json.dumps({**kept, "in_total": 0, "out_total": 0}))
        south = counter("south", broker, state_file=state)  # seq goes on, totals from 0
        south.count(5)
        sent(south)

        # 3. north-manual: a tally whose first message after a reboot was lost.
        topic = TOPICS.gate_count("north-manual")
        start = datetime.now(UTC)
        for seq in range(1, 31):  # a tap a second
            publisher.send(topic, gate_count(seq, start + timedelta(seconds=seq), seq, 0))
        for seq in range(2, 6):  # rebooted; its seq 1 (one tap) never reached the broker
            tap = start + timedelta(seconds=60 + seq)
            publisher.send(topic, gate_count(seq, tap, seq, 0))

        # 4. east: a device with a 1970 clock, rebooting twice (no state file).
        boot = {"at": datetime.now(UTC)}

        def clock_1970() -> datetime:  # its clock starts at 1970 again at each boot
            return datetime(1970, 1, 1, tzinfo=UTC) + (datetime.now(UTC) - boot["at"])

        east = counter("east", broker, clock=clock_1970)
        for persons in (10, 10, 10):  # 30
            east.count(persons)
        # 21, then 50; never the totals of an earlier run under the same seq, since its
        # clock gives the same ts at the same point of each run (then a reading could not
        # be told from that run's, redelivered)
        for run_persons in ((4, 9, 8), (7, 18, 25)):
            sent(east)
            east.power_cycle()
            boot["at"] = datetime.now(UTC)
            for persons in run_persons:
                east.count(persons)
        sent(east)

        status = watcher.status(
            lambda s: s["gates"]["east"]["in"] == 101 and s["gates"]["north-manual"]["in"] == 35,
            30,
        )
        gates = status["gates"]
        assert gates["north"]["in"] == 50  # counted on after the refused reading
        assert (gates["south"]["in"], gates["south"]["restarts"]) == (305, 1)
        assert gates["north-manual"]["restarts"] == 1
        assert (gates["east"]["in"], gates["east"]["restarts"]) == (101, 2)
        assert status["rejected"] == 1
        assert status["sensors"]["north-manual"]["last_gap"] == "seq 1"
        alerts = watcher.alerts().values()
        gaps = [a["message"] for a in alerts if a["rule"] == "sensor-gap"]
        assert gaps == ["manual tally north-manual: seq 1 never received"]
        resets = sorted(a["subject"] for a in alerts if a["rule"] == "counter-reset")
        assert resets == ["east", "north-manual", "south"]
        assert not [a for a in alerts if a["rule"] == "sensor-stuck"]
        for device in (north, south, east):
            device.close(announce=False)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    # The one refusal, with its reason: north's counter had sent seq 1 (its reading on
    # connecting) and 2–4 (three counts) before it.
    (refused,) = [
        r.reason for r in read_records(evidence) if r.kind == "message" and not r.accepted
    ]
    assert refused is not None
    assert refused.startswith("seq 2,147,483,659 is implausible: 2,147,483,655 ahead of seq 4 in")
    assert refused.endswith("(a device sends at most 10 a second); its last seq stays 4")
