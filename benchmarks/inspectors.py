"""What 50 inspectors' dashboards cost the command post, started as ``kent-ops serve`` does.

Each session is a :class:`kent_ops.web.apps.PersonApp` (textual-serve's app service,
as the server's websocket handler makes one), its app process started or forked the
way ``serve --app-start`` says, connected to a real Mosquitto; what it draws is read
where the server would send it to the browser. The HTTP side (sign-in, TLS, the
websocket) is ``benchmarks/serve.py``'s. All ``--sessions`` sessions open at once,
as a shift signing in, at ``--size`` (a phone held upright by default); then a
status with a new attendance figure is published (retained, as the aggregator does)
every ``--interval`` seconds, ``--updates`` times. For each way of starting, printed:

- first screen: from asking for the app to the first frame showing the figure;
- memory once all are drawn: resident (RSS) and proportional (PSS, shared pages
  split between the processes sharing them: the sum is what the machine spends) of
  the apps, and of the fork server, from ``/proc/PID/smaps_rollup``;
- CPU, in cores, of the apps, the fork server and this process (the server's part:
  reading what the apps draw), idle (the same status every 5 s, as the aggregator
  sends it when nothing changes) and during the updates, and per status per app;
- latency from just before each publish to the first frame showing its figure on
  each session: p50, p95 and the worst.

The same run measures ``exec`` (each app its own ``python -m kent_ops``, as before)
and ``fork`` (forked from the pre-imported fork server) one after the other; with
``--baseline REV`` also the apps of that git revision, started with ``exec``.
Targets, of the whole ``serve`` on this 2-core machine: 150 sessions (100 deputies,
50 inspectors) in under 2 GB, so what the inspectors' PSS leaves of the 2 GB is
printed (the deputies' pages and the server must fit in it); p95 under 1 s; every
first screen within 5 s. Run: ``python benchmarks/inspectors.py [--sessions 50]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core import wire
from kent_ops.web.accounts import KdfCost, make_account
from kent_ops.web.apps import FORK_SERVER, AppConfig, PersonApp, launch_for, prepare_apps

EVENT = "bench-fest"
TOPICS = wire.Topics(EVENT)
TARGET_MB, TARGET_P95_S, TARGET_FIRST_S = 2048, 1.0, 5.0
"""The whole serve's memory for 150 sessions; p95 publish to screen; first screen."""
CHEAP = KdfCost(n=2**10, r=8, p=1)


def status(attendance: int, gates: int, lots: int) -> bytes:
    """A festival's status: its gates and lots, attendance and peak ``attendance``."""
    now = datetime.now(UTC)
    per_gate = attendance // gates
    record = wire.Status(
        ts=now,
        event=EVENT,
        event_name="Benchmark Festival",
        attendance=wire.Attendance(
            current=attendance,
            entries=attendance + 500,
            exits=500,
            peak=attendance,
            max_at_one_time=60_000,
            threshold=500,
        ),  # fmt: skip
        gates={
            f"gate-{g:02d}": wire.GateState(
                in_=per_gate + g, out=g, net=per_gate, per_minute=12.0, last_seen=now
            )
            for g in range(gates)
        },
        lots={
            f"lot-{k:02d}": wire.LotState(
                capacity=400, occupied=200 + k, free=200 - k, share=0.5, last_seen=now
            )
            for k in range(lots)
        },
    )
    return wire.encode(record)


@dataclass
class Session:
    """One inspector's app and when each watched figure first reached its browser."""

    name: str
    app: PersonApp | None = None
    asked: float = 0.0
    seen: dict[str, float] = field(default_factory=dict)
    watching: set[str] = field(default_factory=set)
    tail: str = ""

    async def take(self, data: bytes) -> None:
        at = time.perf_counter()
        text = self.tail + data.decode("utf-8", "replace")
        for marker in [m for m in self.watching if m in text]:
            self.seen[marker] = at
            self.watching.discard(marker)
        self.tail = text[-64:]


def _marker(figure: int) -> str:
    return f"peak {figure:,}"


def _proc(pid: int, name: str) -> str:
    try:
        return Path(f"/proc/{pid}/{name}").read_text()
    except OSError:
        return ""


def memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of a process in MiB, from smaps_rollup."""
    rss = pss = 0
    for line in _proc(pid, "smaps_rollup").splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("Pss:"):
            pss = int(line.split()[1])
    return rss / 1024, pss / 1024


def cpu_s(pid: int) -> float:
    """User plus system CPU seconds a process has used (its own, not its children's)."""
    fields = _proc(pid, "stat").rsplit(")", 1)[-1].split()
    if len(fields) < 13:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _until(check: object, within: float) -> bool:
    deadline = time.monotonic() + within
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


@dataclass
class Run:
    """One way of starting, measured."""

    name: str
    first_s: list[float] = field(default_factory=list)
    memory: list[tuple[float, float]] = field(default_factory=list)
    zygote: tuple[float, float] = (0.0, 0.0)
    cpu_idle: dict[str, float] = field(default_factory=dict)
    cpu_busy: dict[str, float] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    missed: int = 0
    ended: bool = False


def _cpu(sessions: list[Session]) -> dict[str, float]:
    zygote = FORK_SERVER._process.pid if FORK_SERVER._process is not None else None  # noqa: SLF001
    return {
        "apps": sum(cpu_s(s.app.pid) for s in sessions if s.app and s.app.pid),
        "fork server": cpu_s(zygote) if zygote else 0.0,
        "this process (the server's part)": time.process_time(),
    }


def _shares(before: dict[str, float], after: dict[str, float], wall: float) -> dict[str, float]:
    return {k: (after[k] - before[k]) / wall for k in before}


async def measure(run: Run, args: argparse.Namespace, broker: MosquittoBroker, start: str) -> None:
    config = AppConfig(EVENT, BrokerAddress(broker.host, broker.port), start=start)
    publisher = make_client(BrokerAddress(broker.host, broker.port, username="bench-agg"))
    publisher.connect(broker.host, broker.port)
    publisher.loop_start()

    def publish(figure: int) -> None:
        payload = status(figure, args.gates, args.lots)
        publisher.publish(TOPICS.status, payload, qos=1, retain=True).wait_for_publish(10)

    figure = 10_000 + 1000 * len(run.name)
    publish(figure)
    await prepare_apps(config)  # as kent-ops serve does when it starts
    sessions = [Session(f"insp-{i:02d}") for i in range(args.sessions)]
    width, height = args.size

    async def nothing(*_: object) -> None:
        return None

    async def open_one(session: Session) -> None:
        account = make_account(session.name, "inspector", "bench pw", cost=CHEAP)
        session.watching.add(_marker(figure))
        session.app = PersonApp(launch_for(account, config), "bench pw",
                                write_bytes=session.take, write_str=nothing, close=nothing,
                                download_manager=None)  # type: ignore[arg-type]  # fmt: skip
        session.asked = time.perf_counter()
        await session.app.start(width, height)

    try:
        await asyncio.gather(*(open_one(s) for s in sessions))
        mark = _marker(figure)
        await _until(lambda: all(mark in s.seen for s in sessions), 300)
        run.first_s = [s.seen.get(mark, float("inf")) - s.asked for s in sessions]
        await asyncio.sleep(2)  # settled: clocks ticking, nothing new
        run.memory = [memory_mb(s.app.pid) for s in sessions if s.app and s.app.pid]
        if start == "fork" and FORK_SERVER._process is not None:  # noqa: SLF001
            run.zygote = memory_mb(FORK_SERVER._process.pid)  # noqa: SLF001
        before, wall0 = _cpu(sessions), time.perf_counter()
        while time.perf_counter() < wall0 + args.idle:
            # Nothing new, but the status again every 5 s, as the aggregator sends it
            # (docs/protocol.md): without it the apps would say it is late.
            publish(figure)
            await asyncio.sleep(min(5.0, max(0.0, wall0 + args.idle - time.perf_counter())))
        run.cpu_idle = _shares(before, _cpu(sessions), time.perf_counter() - wall0)
        before, wall0 = _cpu(sessions), time.perf_counter()
        for _ in range(args.updates):
            figure += 37
            mark = _marker(figure)
            for s in sessions:
                s.watching.add(mark)
            t0 = time.perf_counter()
            publish(figure)
            await _until(lambda m=mark: all(m in s.seen for s in sessions), 10)
            for s in sessions:
                if mark in s.seen:
                    run.latencies.append(s.seen[mark] - t0)
                else:
                    run.missed += 1
                    s.watching.discard(mark)
            await asyncio.sleep(max(0.0, t0 + args.interval - time.perf_counter()))
        run.cpu_busy = _shares(before, _cpu(sessions), time.perf_counter() - wall0)
    finally:
        await asyncio.gather(*(s.app.stop() for s in sessions if s.app), return_exceptions=True)
        publisher.loop_stop()
        publisher.disconnect()
    run.ended = not any(_alive(s.app.pid) for s in sessions if s.app and s.app.pid)


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(run: Run, args: argparse.Namespace) -> None:
    n = len(run.memory)
    rss = sum(r for r, _ in run.memory) + run.zygote[0]
    pss = sum(p for _, p in run.memory) + run.zygote[1]
    worst_first = max(run.first_s)
    print(f"-- {run.name}: {n} apps")
    verdict = "ok" if worst_first < TARGET_FIRST_S else "OVER"
    if worst_first == float("inf"):
        shown = sum(1 for t in run.first_s if t != float("inf"))
        print(f"   first screen: the figure appeared on {shown} of {n} screens "
              f"(target every one within {TARGET_FIRST_S:g} s: OVER)")  # fmt: skip
    else:
        median = statistics.median(run.first_s)
        print(f"   first screen: median {median:.1f} s, worst {worst_first:.1f} s "
              f"(target: every one within {TARGET_FIRST_S:g} s: {verdict})")  # fmt: skip
    each = f"{statistics.mean(r for r, _ in run.memory):.0f} MB RSS, "
    each += f"{statistics.mean(p for _, p in run.memory):.1f} MB PSS each"
    zygote = (
        f" + fork server {run.zygote[0]:.0f} MB RSS, {run.zygote[1]:.0f} MB PSS"
        if run.zygote[0]
        else ""
    )
    print(f"   memory: {each}{zygote}; in all RSS {rss:.0f} MB, PSS {pss:.0f} MB, which "
          f"leaves {TARGET_MB - pss:.0f} MB of the {TARGET_MB} MB for 150 sessions to the "
          f"deputies and the server")  # fmt: skip
    idle = ", ".join(f"{k} {v:.2f}" for k, v in run.cpu_idle.items())
    busy = ", ".join(f"{k} {v:.2f}" for k, v in run.cpu_busy.items())
    per_status = run.cpu_busy.get("apps", 0.0) * args.interval / max(1, n) * 1000
    print(f"   CPU in cores, idle: {idle}; during updates: {busy} (of {os.cpu_count()}); "
          f"{per_status:.1f} ms per status per app")  # fmt: skip
    if run.latencies:
        p95 = _p(run.latencies, 0.95)
        verdict = "ok" if p95 < TARGET_P95_S and not run.missed else "OVER"
        print(f"   publish -> screen, {len(run.latencies)} samples: p50 "
              f"{statistics.median(run.latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
              f"worst {max(run.latencies) * 1000:.0f} ms, missed {run.missed} "
              f"(target p95 under {TARGET_P95_S:g} s: {verdict})")  # fmt: skip
    print(f"   every app ended when its session closed: {'yes' if run.ended else 'NO'}")


def _tree(revision: str, into: Path) -> Path:
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", revision],
                             check=True, capture_output=True).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50, help="inspectors (default 50)")
    parser.add_argument("--size", type=_size, default=(43, 45), help="cells (default 43x45)")
    parser.add_argument("--gates", type=int, default=40, help="gates in the status")
    parser.add_argument("--lots", type=int, default=8, help="lots in the status")
    parser.add_argument("--updates", type=int, default=30, help="statuses timed (default 30)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between statuses")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds measured idle")
    parser.add_argument("--baseline", help="also this git revision's apps, started with exec")
    parser.add_argument("--starts", default="exec,fork", help="ways to start, in order")
    args = parser.parse_args()
    width, height = args.size
    size = len(status(1, args.gates, args.lots))
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {args.sessions} inspectors "
          f"at {width}x{height}; status of {args.gates} gates and {args.lots} lots, "
          f"{size:,} bytes, every {args.interval:g} s")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="kent-inspectors-bench-") as folder:
        root = Path(folder)
        broker = MosquittoBroker(root / "broker").start()
        try:
            plan = [(f"{start}, this tree", start, None) for start in args.starts.split(",")]
            if args.baseline:
                tree = _tree(args.baseline, root / "baseline")
                plan.insert(0, (f"exec, {args.baseline}", "exec", tree))
            for name, start, tree in plan:
                run = Run(name)
                saved = os.environ.get("PYTHONPATH")
                if tree is not None:
                    os.environ["PYTHONPATH"] = str(tree)
                try:
                    asyncio.run(measure(run, args, broker, start))
                finally:
                    if saved is None:
                        os.environ.pop("PYTHONPATH", None)
                    else:
                        os.environ["PYTHONPATH"] = saved
                report(run, args)
                sys.stdout.flush()
        finally:
            broker.stop()
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
