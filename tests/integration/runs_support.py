"""``kent-ops run`` as a real process on one permit and log, as often as a test likes, and the
other commands (``verify``, ``report``, ``bundle``) as real processes on what it wrote."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from live_support import TOPICS, Publisher, Watcher, permit_text, wait_until
from security_support import account, retained

from kent_ops.broker.mosquitto import MosquittoBroker

CHECKPOINT = TOPICS.checkpoint


class Runs:
    """``kent-ops run`` on one permit and log, as often as a test likes."""

    def __init__(self, tmp_path: Path, broker: MosquittoBroker) -> None:
        self.permit = tmp_path / "permit.toml"
        self.permit.write_text(permit_text(gates=("north", "south")))
        self.evidence = tmp_path / "evidence.sqlite"
        self.head_file = tmp_path / "evidence.sqlite.head"
        self.broker = broker
        self.stderr = tmp_path / "run.log"
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, *extra: str) -> subprocess.Popen[bytes]:
        self.stderr.write_bytes(b"")
        proc = subprocess.Popen(
            [sys.executable, "-m", "kent_ops", "run", "--permit", str(self.permit),
             "--evidence", str(self.evidence), "--broker", self.broker.url,
             "--clock", "sensor", *extra],
            stdout=subprocess.DEVNULL,
            stderr=self.stderr.open("ab"),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        self.procs.append(proc)
        return proc

    def running(
        self, watcher: Watcher, publisher: Publisher, first: int, last: int
    ) -> subprocess.Popen[bytes]:
        """A run that has taken readings ``first``..``last`` of gate north, still running."""
        watcher.forget(TOPICS.aggregator_availability)
        proc = self.start()
        watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online", 30)
        for seq in range(first, last + 1):
            publisher.gate("north", seq, seq, 10 * seq, 0)
        watcher.status(lambda s: s["gates"]["north"]["in"] == 10 * last, timeout=30)
        return proc

    def serve(self, watcher: Watcher, publisher: Publisher, first: int, last: int) -> None:
        """A run that takes readings ``first``..``last`` of gate north and stops cleanly."""
        proc = self.running(watcher, publisher, first, last)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, self.stderr.read_text()

    def checkpoint(self) -> dict[str, object] | None:
        raw = retained(account(self.broker, None), CHECKPOINT)
        return None if raw is None else json.loads(raw)

    def head(self) -> dict[str, Any]:
        """What the head file beside the log says now."""
        return json.loads(self.head_file.read_text())  # type: ignore[no-any-return]

    def head_reaches(self, record: int) -> dict[str, Any]:
        """The head file once it names ``record`` or a later one (it lags a commit by ≤ 1 s)."""

        def reached() -> dict[str, Any] | None:
            if not self.head_file.exists():
                return None
            head = self.head()
            return head if head["record"] >= record else None

        return wait_until(reached, 15, f"the head file to reach record {record}")  # type: ignore[no-any-return]

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def kent_ops(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real ``kent-ops`` command, a process of its own, as a clerk would type it."""
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=cwd,
    )  # fmt: skip
