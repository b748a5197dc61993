"""How many browser sessions ``kent-ops serve`` carries here, and how fast each follows a status.

``--sessions`` people (default 20: half inspectors' dashboards at 120×40, a tablet;
half deputies' gate views at 43×40, a phone) sign in over HTTPS and hold a websocket
each, speaking textual-serve's protocol as its page does; the server runs one app
process per session, each connected to a real Mosquitto with its person's user. Then
a status with a new attendance figure is published (retained, as the aggregator
does) every ``--interval`` seconds, ``--updates`` times. Printed:

- memory: the resident set (RSS) of every app process, per kind and in all, with the
  proportional set (PSS, shared library pages split between the processes that share
  them, so the sum is what the machine really spends) and the server's own;
- latency: for each session and update, from just before the publish to the first
  frame on its websocket that shows the new figure; p50, p95 and the worst.

Targets: 20 sessions in under 2 GB, p95 under 1 s. Everything runs on the loopback
and stops by itself. Run: ``python benchmarks/serve.py [--sessions 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, ClientWebSocketResponse, CookieJar, WSMsgType

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.commands.deploy import make_certs
from kent_ops.core import wire
from kent_ops.web.accounts import make_account, save_accounts

EVENT = "bench-fest"
TOPICS = wire.Topics(EVENT)
GATES, LOTS = 10, 3
TARGET_GB, TARGET_P95_S = 2.0, 1.0
PASSWORD = "bench password"
SIZES = {"dashboard": (120, 40), "gate": (43, 40)}


def status(attendance: int) -> bytes:
    """A field-sized status (10 gates, 3 lots) whose attendance and peak are ``attendance``."""
    now = datetime.now(UTC)
    gates = {
        f"gate-{g:02d}": wire.GateState(
            in_=attendance // GATES + g,
            out=g,
            net=attendance // GATES,
            per_minute=12.0,
            last_seen=now,
        )  # fmt: skip
        for g in range(GATES)
    }
    lots = {
        f"lot-{k}": wire.LotState(
            capacity=400, occupied=200 + k, free=200 - k, share=0.5, last_seen=now
        )  # fmt: skip
        for k in range(LOTS)
    }
    record = wire.Status(
        ts=now,
        event=EVENT,
        event_name="Benchmark Festival",
        attendance=wire.Attendance(
            current=attendance,
            entries=attendance + 500,
            exits=500,
            peak=attendance,
            max_at_one_time=40_000,
        ),  # fmt: skip
        gates=gates,
        lots=lots,
    )
    return wire.encode(record)


@dataclass
class Session:
    """One person's websocket and when each figure first appeared on it."""

    name: str
    app: str
    seen: dict[str, float] = field(default_factory=dict)
    watching: set[str] = field(default_factory=set)
    frames: int = 0
    tail: str = ""

    def take(self, chunk: str, at: float) -> None:
        text = self.tail + chunk
        for marker in [m for m in self.watching if m in text]:
            self.seen[marker] = at
            self.watching.discard(marker)
        self.tail = text[-64:]
        self.frames += 1


async def _run_session(
    session: Session, base: str, context: ssl.SSLContext, stop: asyncio.Event
) -> None:
    """Sign in, open the app's websocket and read its frames until told to stop."""
    async with ClientSession(cookie_jar=CookieJar(unsafe=True)) as client:
        form = {"name": session.name, "password": PASSWORD}
        origin = {"Origin": base}  # as a browser's form says where it was posted from
        async with client.post(
            f"{base}/signin", data=form, ssl=context, headers=origin
        ) as response:
            if response.status != 200 or not response.url.path.endswith(session.app):
                raise RuntimeError(f"{session.name}: sign-in failed ({response.status})")
        width, height = SIZES[session.app]
        url = base.replace("https", "wss") + f"/ws/{session.app}?width={width}&height={height}"
        async with client.ws_connect(url, ssl=context, origin=base, max_msg_size=0) as ws:
            await ws.send_json(["resize", {"width": width, "height": height}])
            reader = asyncio.ensure_future(_read(ws, session))
            await stop.wait()
            await ws.close()
            await reader


async def _read(ws: ClientWebSocketResponse, session: Session) -> None:
    async for message in ws:
        if message.type == WSMsgType.BINARY:
            session.take(message.data.decode("utf-8", "replace"), time.perf_counter())


def _children(server: subprocess.Popen[bytes]) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == server.pid:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def _memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in KiB."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds a process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_report(server: subprocess.Popen[bytes]) -> dict[str, float]:
    """CPU seconds used so far by the apps of each kind, the server and this client."""
    used = {"dashboard": 0.0, "gate": 0.0}
    for pid in _children(server):
        kind = _kind(pid)
        if kind in used:
            used[kind] += _cpu_s(pid)
    used["server"] = _cpu_s(server.pid)
    used["client"] = time.process_time()
    return used


def _kind(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "gone"
    return "gate" if b"gate" in argv else "dashboard"


def memory_report(server: subprocess.Popen[bytes]) -> dict[str, Any]:
    by_kind: dict[str, list[tuple[int, int]]] = {"dashboard": [], "gate": []}
    for pid in _children(server):
        kind = _kind(pid)
        if kind in by_kind:
            by_kind[kind].append(_memory_kb(pid))
    apps = [m for ms in by_kind.values() for m in ms]
    return {
        "apps": len(apps),
        "rss_total_mb": sum(r for r, _ in apps) / 1024,
        "pss_total_mb": sum(p for _, p in apps) / 1024,
        "per_kind": {
            kind: (
                len(ms),
                statistics.mean(r for r, _ in ms) / 1024 if ms else 0.0,
                statistics.mean(p for _, p in ms) / 1024 if ms else 0.0,
            )  # fmt: skip
            for kind, ms in by_kind.items()
        },
        "server_rss_mb": _memory_kb(server.pid)[0] / 1024,
    }


def _users(path: Path, sessions: int) -> list[Session]:
    people = []
    accounts = {}
    for i in range(sessions):
        if i % 2 == 0:
            name = f"insp-{i:02d}"
            accounts[name] = make_account(name, "inspector", PASSWORD)
            people.append(Session(name, "dashboard"))
        else:
            name = f"deputy-{i:02d}"
            # One deputy per gate: a second one would take the gate's tally over.
            gate = f"gate-{i // 2:02d}" if i // 2 < GATES else f"extra-{i:02d}"
            accounts[name] = make_account(name, "deputy", PASSWORD, gate=gate)
            people.append(Session(name, "gate"))
    save_accounts(path, accounts)
    return people


class Publisher:
    """The aggregator's part: retained statuses and gate commands, QoS 1."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.client = make_client(BrokerAddress(broker.host, broker.port, username="bench-agg"))
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def send(self, topic: str, payload: bytes) -> None:
        self.client.publish(topic, payload, qos=1, retain=True).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _start_server(
    root: Path, broker: MosquittoBroker, certs: dict[str, Path]
) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    log = (root / "serve.log").open("ab")
    server = subprocess.Popen(
        [sys.executable, "-m", "kent_ops", "serve", "--event", EVENT,
         "--broker", f"mqtt://127.0.0.1:{broker.port}", "--listen", f"127.0.0.1:{port}",
         "--users", str(root / "users.json"), "--tls-cert", str(certs["server_crt"]),
         "--tls-key", str(certs["server_key"]), "--state-dir", str(root / "tally"),
         "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=log,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while "kent-ops serve:" not in (root / "serve.log").read_text():
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"kent-ops serve did not start: {(root / 'serve.log').read_text()}")
        time.sleep(0.1)
    return f"https://127.0.0.1:{port}", server


async def _until(predicate: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def measure(args: argparse.Namespace, root: Path, broker: MosquittoBroker) -> None:
    certs = make_certs(root / "certs", ["127.0.0.1"])
    people = _users(root / "users.json", args.sessions)
    publisher = Publisher(broker)
    for g in range(GATES):
        command = wire.GateCommand(admit=True, attendance=1000, hold_at=40_000)
        publisher.send(TOPICS.gate_command(f"gate-{g:02d}"), wire.encode(command))
    first = 10_000
    for person in people:
        person.watching.add(f"{first:,}")
    publisher.send(TOPICS.status, status(first))
    base, server = _start_server(root, broker, certs)
    context = ssl.create_default_context(cafile=str(certs["ca_crt"]))
    stop = asyncio.Event()
    started = time.perf_counter()
    tasks = [asyncio.ensure_future(_run_session(p, base, context, stop)) for p in people]
    try:
        ready = await _until(lambda: all(f"{first:,}" in p.seen for p in people), 180)
        startup = time.perf_counter() - started
        print(f"{len(people)} sessions signed in and drawn in {startup:.1f} s"
              f"{'' if ready else ' (NOT ALL READY)'}")  # fmt: skip
        memory = memory_report(server)
        cpu0, wall0 = cpu_report(server), time.perf_counter()
        await asyncio.sleep(args.idle)  # the same apps with nothing new: clocks ticking
        cpu1, wall = cpu_report(server), time.perf_counter() - wall0
        shares = ", ".join(f"{k} {(cpu1[k] - cpu0[k]) / wall:.2f}" for k in cpu0)
        print(f"CPU with no new status, in cores: {shares} (of {os.cpu_count()})")
        cpu0, wall0 = cpu_report(server), time.perf_counter()
        latencies, missed = await _updates(args, people, publisher, first)
        cpu1, wall = cpu_report(server), time.perf_counter() - wall0
        after = memory_report(server)
        shares = ", ".join(f"{k} {(cpu1[k] - cpu0[k]) / wall:.2f}" for k in cpu0)
        print(f"CPU during the updates, in cores: {shares} (of {os.cpu_count()})")
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        publisher.close()
    ended = await _until(lambda: not _children(server), 30)
    server.terminate()
    server.wait(30)
    _print(memory, after, latencies, missed, args, ended)


async def _updates(
    args: argparse.Namespace, people: list[Session], publisher: Publisher, first: int
) -> tuple[list[float], int]:
    latencies: list[float] = []
    missed = 0
    for k in range(1, args.updates + 1):
        figure = f"{first + 37 * k:,}"
        for person in people:
            person.watching.add(figure)
        payload = status(first + 37 * k)
        t0 = time.perf_counter()
        publisher.send(TOPICS.status, payload)
        await _until(lambda f=figure: all(f in p.seen for p in people), 10)
        for person in people:
            if figure in person.seen:
                latencies.append(person.seen[figure] - t0)
            else:
                missed += 1
                person.watching.discard(figure)
        await asyncio.sleep(max(0.0, t0 + args.interval - time.perf_counter()))
    return latencies, missed


def _print(
    memory: dict[str, Any],
    after: dict[str, Any],
    latencies: list[float],
    missed: int,
    args: argparse.Namespace,
    ended: bool,
) -> None:
    worst = max(memory["rss_total_mb"], after["rss_total_mb"])
    for kind, (count, rss, pss) in after["per_kind"].items():
        print(f"{kind}: {count} app processes, RSS {rss:.0f} MB each (PSS {pss:.0f} MB)")
    verdict = "ok" if worst / 1024 < TARGET_GB else "OVER"
    print(
        f"memory of {after['apps']} app processes: RSS {worst:.0f} MB in all "
        f"(PSS {after['pss_total_mb']:.0f} MB); the server {after['server_rss_mb']:.0f} MB "
        f"(target: {args.sessions} sessions under {TARGET_GB:g} GB: {verdict})"
    )
    if latencies:
        ordered = sorted(latencies)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        verdict = "ok" if p95 < TARGET_P95_S else "OVER"
        print(
            f"status publish -> change on screen, {len(latencies)} samples: "
            f"p50 {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
            f"max {ordered[-1] * 1000:.0f} ms, missed {missed} "
            f"(target p95 < {TARGET_P95_S:g} s: {verdict})"
        )
    print(f"after the websockets closed, every app process ended: {'yes' if ended else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="browser sessions (default 20)")
    parser.add_argument("--updates", type=int, default=30, help="statuses to time (default 30)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between statuses")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds measured idle first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kent-serve-bench-") as folder:
        root = Path(folder)
        broker = MosquittoBroker(root / "broker").start()
        try:
            print(f"{os.cpu_count()} cores; status of {GATES} gates, {LOTS} lots, "
                  f"{len(status(1))} bytes, every {args.interval:g} s")  # fmt: skip
            asyncio.run(measure(args, root, broker))
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
