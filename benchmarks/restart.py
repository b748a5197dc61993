"""How long a restarted aggregator is blind: from ``kent-ops run`` to its first status.

A restart is the moment everyone watches (systemd restarts the service after a crash).
This writes the evidence log of a three-day, 50-gate festival (about 5,000,000 records,
with :func:`benchmarks.report.generate`) twice: as it was before engine snapshots, and
with a ``snapshot`` record every five minutes of the event, as the service now writes
them. Writing them takes minutes, so both are cached (``--cache``, by default
/tmp/kent-restart-bench) and reused by later runs.

For each log it starts a private Mosquitto and ``python -m kent_ops run`` on a copy of
the log (a real subprocess, wall clock), and measures from the start of the process to:

- the first status it publishes (a paho subscriber receives it): how long deputies and
  inspectors are blind;
- the log line saying the whole chain was verified in the background (the second
  process on the other core).

Target: the first status in under 5 s with snapshots (about 120 s without). The figures
are wall-clock time on this machine, so other work on it slows them; the load average
is printed beside them.

Run: ``python benchmarks/restart.py`` (``--days 1`` for a quick look).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import paho.mqtt.client as mqtt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import EVENT, Writer, festival_permit, generate  # noqa: E402

from kent_ops.broker.client import make_client, parse_broker_url  # noqa: E402
from kent_ops.broker.mosquitto import MosquittoBroker  # noqa: E402
from kent_ops.core.engine import Engine  # noqa: E402
from kent_ops.evidence.log import format_time, json_bytes  # noqa: E402

SNAPSHOT_EVERY_S = 300
VERIFIED = "evidence verified in the background"
BROKEN = "EVIDENCE LOG BROKEN"


def write_snapshots(engine: Engine, w: Writer, at: datetime, sec: int) -> None:
    """Every five minutes of the event, what the service writes: a tick, then the state."""
    if sec == 0 or sec % SNAPSHOT_EVERY_S:
        return
    stamp = format_time(at)
    engine_time = format_time(engine.now or at)
    w.append("tick", stamp, None, json_bytes({"engine_time": engine_time}), None, None)
    w.append("snapshot", stamp, None, engine.snapshot({"storage_alerts": 0}), None, None)


def cached_log(cache: Path, name: str, permit: Path, days: float, snapshots: bool) -> Path:
    """The festival's log, written once and kept (a marker file says it is complete)."""
    path = cache / f"{name.replace(' ', '-')}-{days:g}d.sqlite"
    done = path.with_suffix(".complete")
    if path.exists() and done.exists():
        print(f"{name:<22} cached: {path} ({path.stat().st_size / 1e6:,.0f} MB)")
        return path
    for stale in (path, done, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    print(f"{name:<22} writing {path} (this takes minutes)...", flush=True)
    hook = write_snapshots if snapshots else None
    records, seconds = generate(path, permit, days, progress=False, on_second=hook)  # type: ignore[arg-type]
    done.write_text(f"{records}\n")
    size = path.stat().st_size / 1e6
    print(f"{name:<22} {records:,} records, {size:,.0f} MB, written in {seconds:.0f} s")
    return path


class Run:
    """One ``kent-ops run`` on a copy of a log, watched from its start."""

    def __init__(self, permit: Path, log: Path, work: Path, broker: MosquittoBroker) -> None:
        self.first_status = threading.Event()
        self.status_at: float | None = None
        self.lines: list[tuple[float, str]] = []
        self._cond = threading.Condition()
        self.client = make_client(parse_broker_url(broker.url))
        subscribed = threading.Event()
        self.client.on_connect = lambda c, *a: c.subscribe(f"kent/{EVENT}/status", qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_message = self._on_status
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        if not subscribed.wait(10):
            raise SystemExit("could not subscribe to the broker")
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kent_ops", "run", "--permit", str(permit), "--evidence",
             str(log), "--broker", broker.url, "--clock", "wall"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()

    def _on_status(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        if self.status_at is None:
            self.status_at = time.perf_counter() - self.t0
            self.first_status.set()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._cond:
                self.lines.append((time.perf_counter() - self.t0, line.rstrip()))
                self._cond.notify_all()

    def line(self, *words: str, timeout: float) -> tuple[float, str] | None:
        """The first log line holding one of ``words``, waiting for it up to ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for at, line in self.lines:
                    if any(w in line for w in words):
                        return at, line
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.proc.poll() is not None:
                    return None
                self._cond.wait(min(remaining, 1.0))

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(10)
        self.client.disconnect()
        self.client.loop_stop()
        return code


def measure(name: str, permit: Path, cached: Path, work: Path) -> None:
    """Start the service on a copy of ``cached``; print its first status and verification."""
    log = work / f"{name.replace(' ', '-')}.sqlite"
    shutil.copyfile(cached, log)
    broker = MosquittoBroker(Path(tempfile.mkdtemp(prefix="mosquitto-", dir=work)))
    broker.start()
    load = os.getloadavg()[0]
    try:
        run = Run(permit, log, work, broker)
        if not run.first_status.wait(1800):
            raise SystemExit(f"{name}: no status within 30 minutes")
        verified = run.line(VERIFIED, BROKEN, timeout=1800)
        rebuilt = run.line("rebuilt from", timeout=10)
        code = run.stop()
    finally:
        broker.stop()
    print(f"\n{name}  (load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)")
    print(f"  first status         {run.status_at:7.1f} s after kent-ops run was started")
    if verified is None:
        print("  background verify    no answer before the service stopped")
    else:
        print(f"  background verify    {verified[0]:7.1f} s  | {verified[1].split(': ', 1)[-1]}")
    if rebuilt is not None:
        print(f"  rebuilt              {rebuilt[0]:7.1f} s  | {rebuilt[1].split(': ', 1)[-1]}")
    print(f"  exit code            {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--days", type=float, default=3, help="festival days (default 3; 0.1 for a smoke test)"
    )
    parser.add_argument(
        "--cache",
        default="/tmp/kent-restart-bench",
        help="where the generated logs are kept between runs (default %(default)s)",
    )
    args = parser.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    permit = festival_permit(cache / "festival.toml")
    plain = cached_log(cache, "without snapshots", permit, args.days, snapshots=False)
    snapped = cached_log(cache, "with snapshots", permit, args.days, snapshots=True)
    work = Path(tempfile.mkdtemp(prefix="kent-restart-bench-"))
    try:
        measure("with snapshots", permit, snapped, work)
        measure("without snapshots", permit, plain, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
