"""What ``kent-ops serve`` costs the command post for a festival's phones, and how fast it follows.

``--deputies`` deputies (default 100, two to a gate over ``--gates`` gates, some gates
with a manual tally) and ``--inspectors`` inspectors (default 50) sign in over HTTPS
from a phone's screen and hold their page's websocket, each speaking its page's
protocol: a deputy's gate view is a websocket to its gate's hub inside the server, an
inspector's page a websocket to the event's inspectors' hub (JSON views both). For
comparison in the same run, ``--dashboards`` more inspectors (default 5) then open the
full dashboard, textual-serve's terminal, one app process each, as every inspector's
phone did before the page. A real Mosquitto carries a status with a new attendance
figure (retained, as the aggregator publishes it) every ``--interval`` seconds,
``--updates`` times; the deputies at gates with a tally tap once each round, and one
inspector in five sends a note, with their own broker account.

Printed, with the targets of docs/architecture.md on this machine (50 inspectors
signing in at once, every first screen within 5 s; 150 sessions, 100 deputies and 50
inspectors on the page, under 0.5 GB for the server and all it started; publish →
screen p95 under 0.5 s for both kinds), and the machine's load average at the start
and the end (the machine is shared: the figures are only as quiet as it was):

- a same-run baseline: the server alone, signed in by nobody, with the statuses flowing;
- time to first screen (sign-in to the first screen showing the current figure) when
  ``--burst`` people sign in at the same moment, per kind;
- memory: resident (RSS) and proportional (PSS: shared pages split between the
  processes sharing them, so the sum is what the machine spends, and what the target
  is judged on) of the server and every process it started (the apps' fork server
  too), from /proc/<pid>/smaps_rollup;
- the CPU each burst of sign-ins cost the server and the apps until its last first
  screen (what two cores need at least, whatever else the machine is doing);
- CPU in cores, idle and during the updates: the server, the inspectors' apps, the
  broker and this client;
- status publish → change on screen, per kind: p50, p95 and the worst; a tap →
  "sent" on the deputy's phone (the broker has it; no aggregator runs here to count
  it); an inspector's note → "delivered" on the page;
- then the full dashboards' first screens, their memory each, and their publish →
  screen in a second round of updates beside everyone else.

Everything runs on the loopback and stops by itself. Run:
``python benchmarks/serve.py [--deputies 100] [--inspectors 50] [--dashboards 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
LOTS = 3
TALLY_EVERY = 5
"""One gate in five has a manual tally (``{gate}-manual``) in the benchmark's permit."""
TARGET_GB, TARGET_P95_S, TARGET_FIRST_S = 0.5, 0.5, 5.0
PASSWORD = "bench password"
DASHBOARD_SIZE = (120, 40)
PHONE_WIDTH, DESK_WIDTH = "390", "1280"
"""The screen width the sign-in form reports: a phone's lands on its page."""
KINDS = ("deputy", "inspector", "dashboard", "old")
PLURAL = {
    "deputy": "deputies",
    "inspector": "inspectors on the page",
    "dashboard": "inspectors on the full dashboard",
    "old": "baseline gate apps",
}
APP = {"deputy": "gate", "inspector": "inspector", "dashboard": "dashboard"}
NOTE_EVERY = 5
"""One inspector in five sends a note each round."""
GATE_APP_SIZE = (43, 40)
"""A phone's terminal (390×844 CSS pixels at 16 px) for the baseline's gate apps."""


def gate_ids(gates: int) -> list[str]:
    return [f"gate-{g:03d}" for g in range(gates)]


def status(attendance: int, gates: int) -> bytes:
    """A festival's status: ``gates`` gates (and their tallies), 3 lots, ``attendance``."""
    now = datetime.now(UTC)
    per_gate = attendance // max(1, gates)
    states = {}
    for number, gate in enumerate(gate_ids(gates)):
        states[gate] = wire.GateState(
            in_=per_gate + number, out=number, net=per_gate, per_minute=12.0, last_seen=now
        )
        if number % TALLY_EVERY == 0:
            states[f"{gate}-manual"] = wire.GateState(manual=True)
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
        admit=True,
        gates=states,
        lots=lots,
    )
    return wire.encode(record)


@dataclass
class Person:
    """One signed-in person's page: when each figure first appeared on it."""

    name: str
    kind: str  # one of KINDS
    gate: str | None = None
    tally: bool = False
    seen: dict[int, float] = field(default_factory=dict)
    started: float = 0.0
    signed_in: float | None = None
    """Seconds from the sign-in's POST to its answer (the server's scrypt check)."""
    first_screen: float | None = None
    taps_sent: dict[str, float] = field(default_factory=dict)
    taps_delivered: dict[str, float] = field(default_factory=dict)
    """A deputy's taps, or an inspector's notes, when sent and when the page heard
    the broker has them."""
    tail: str = ""
    watching: set[int] = field(default_factory=set)
    error: str = ""

    def saw(self, figure: int, at: float) -> None:
        if figure not in self.seen:
            self.seen[figure] = at

    def take_frame(self, chunk: str, at: float) -> None:
        """An inspector's terminal: look for each watched figure as it is printed."""
        text = self.tail + chunk
        for figure in [f for f in self.watching if f"{f:,}" in text]:
            self.saw(figure, at)
            self.watching.discard(figure)
        self.tail = text[-64:]


async def _sign_in(client: ClientSession, base: str, person: Person, ssl_: ssl.SSLContext) -> str:
    width = DESK_WIDTH if person.kind == "dashboard" else PHONE_WIDTH
    form = {"name": person.name, "password": PASSWORD, "width": width}
    async with client.post(
        f"{base}/signin", data=form, ssl=ssl_, headers={"Origin": base}
    ) as response:
        if response.status != 200:
            raise RuntimeError(f"{person.name}: sign-in failed ({response.status})")
        return response.url.path


async def _run(
    person: Person, base: str, ssl_: ssl.SSLContext, stop: asyncio.Event, first: int
) -> None:
    """Sign in, open the page's websocket and read it until told to stop."""
    person.started = time.perf_counter()
    person.watching.add(first)
    try:
        async with ClientSession(cookie_jar=CookieJar(unsafe=True)) as client:
            path = await _sign_in(client, base, person, ssl_)
            person.signed_in = time.perf_counter() - person.started
            app = APP[person.kind]
            if not path.endswith(app):
                raise RuntimeError(f"{person.name}: sent to {path}")
            query = "" if app != "dashboard" else "?width={}&height={}".format(*DASHBOARD_SIZE)
            url = base.replace("https", "wss") + f"/ws/{app}{query}"
            async with client.ws_connect(url, ssl=ssl_, origin=base, max_msg_size=0) as ws:
                if app == "dashboard":
                    width, height = DASHBOARD_SIZE
                    await ws.send_json(["resize", {"width": width, "height": height}])
                person.ws = ws  # type: ignore[attr-defined]
                reader = asyncio.ensure_future(_read(ws, person, first))
                await stop.wait()
                await ws.close()
                await reader
    except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
        person.error = f"{type(exc).__name__}: {exc}"


async def _read(ws: ClientWebSocketResponse, person: Person, first: int) -> None:
    async for message in ws:
        at = time.perf_counter()
        if message.type == WSMsgType.BINARY:
            person.take_frame(message.data.decode("utf-8", "replace"), at)
        elif message.type == WSMsgType.TEXT and person.kind == "deputy":
            data = json.loads(message.data)
            view = data.get("view")
            if view is not None and isinstance(view.get("attendance"), int):
                person.saw(view["attendance"], at)
            for tap_id in data.get("sent", ()):
                person.taps_delivered.setdefault(tap_id, at)
        elif message.type == WSMsgType.TEXT and person.kind == "inspector":
            data = json.loads(message.data)
            figure = ((data.get("view") or {}).get("attendance") or {}).get("value")
            if isinstance(figure, int):
                person.saw(figure, at)
            for answer in data.get("actions", ()):
                if answer.get("state") in ("delivered", "recorded"):
                    person.taps_delivered.setdefault(answer["id"], at)
        if person.first_screen is None and first in person.seen:
            person.first_screen = person.seen[first] - person.started


# -- the machine: processes, memory, CPU ------------------------------------------------


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of one process in MiB, from /proc/<pid>/smaps_rollup."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except OSError:
        pass
    return rss / 1024, pss / 1024


def cpu_s(pid: int) -> float:
    """User plus system CPU seconds a process (all its threads) has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Machine:
    """The processes measured: the server, its app processes, the broker, this client."""

    server: int
    broker: int

    def groups(self) -> dict[str, list[int]]:
        return {
            "server": [self.server],
            "processes it started": _children(self.server),
            "broker": [self.broker],
            "baseline gate apps": [p for p in _children(os.getpid()) if _is_gate_app(p)],
        }

    def memory(self) -> dict[str, tuple[int, float, float]]:
        """Per group: processes, RSS and PSS in MiB."""
        out = {}
        for name, pids in self.groups().items():
            sizes = [memory_mb(p) for p in pids]
            out[name] = (len(pids), sum(r for r, _ in sizes), sum(p for _, p in sizes))
        return out

    def cpu(self) -> dict[str, float]:
        used = {name: sum(cpu_s(p) for p in pids) for name, pids in self.groups().items()}
        used["client"] = time.process_time()
        return used


def _is_fork_server(pid: int) -> bool:
    """The apps' fork server: the server's child for as long as the server runs."""
    try:
        return b"kent_ops.commands.zygote" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _is_gate_app(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"kent_ops" in argv and b"gate" in argv


def cores(before: dict[str, float], after: dict[str, float], wall: float) -> str:
    shares = [f"{k} {(after[k] - before.get(k, 0.0)) / wall:.2f}" for k in after]
    return ", ".join(shares) + f" (of {os.cpu_count()})"


def quantiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"p50 {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
        f"worst {ordered[-1] * 1000:.0f} ms ({len(ordered)} samples)"
    )


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else float("inf")


# -- the field -------------------------------------------------------------------------


def people(
    path: Path, deputies: int, inspectors: int, gates: int, dashboards: int = 0
) -> list[Person]:
    """Deputies two (or more) to a gate, then inspectors on the page, then those on the
    full dashboard; their users file (real scrypt)."""
    accounts, persons = {}, []
    for i in range(deputies):
        number = i % gates
        gate = gate_ids(gates)[number]
        name = f"deputy-{i:03d}"
        accounts[name] = make_account(name, "deputy", PASSWORD, gate=gate)
        persons.append(Person(name, "deputy", gate, tally=number % TALLY_EVERY == 0))
    for i in range(inspectors):
        name = f"insp-{i:03d}"
        accounts[name] = make_account(name, "inspector", PASSWORD)
        persons.append(Person(name, "inspector"))
    for i in range(dashboards):
        name = f"desk-{i:03d}"
        accounts[name] = make_account(name, "inspector", PASSWORD)
        persons.append(Person(name, "dashboard"))
    save_accounts(path, accounts)
    return persons


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


def start_server(
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


async def until(predicate: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


# -- the run ---------------------------------------------------------------------------


@dataclass
class Run:
    args: argparse.Namespace
    persons: list[Person]
    publisher: Publisher
    machine: Machine
    figure: int = 10_000

    def publish(self, figure: int) -> float:
        self.figure = figure
        for person in self.persons:
            person.watching.add(figure)
        t0 = time.perf_counter()
        self.publisher.send(TOPICS.status, status(figure, self.args.gates))
        return t0

    async def ticking(self, seconds: float) -> None:
        """The aggregator's steady pace: a new figure every interval (the baseline too)."""
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            self.publish(self.figure + 1)
            await asyncio.sleep(self.args.interval)


async def baseline_gate_apps(run: Run, broker: MosquittoBroker, root: Path) -> list[Any]:
    """The design before the hubs, in this same run: one Textual gate app a phone.

    ``--old-deputies`` ``kent-ops gate`` processes run as ``kent-ops serve`` used to run
    them (textual-serve's app service, a phone's terminal size), so their memory,
    CPU and latency are measured on the same machine at the same moment.
    """
    from textual_serve.download_manager import DownloadManager

    from kent_ops.web.accounts import KdfCost
    from kent_ops.web.apps import AppConfig, PersonApp, launch_for

    config = AppConfig(
        EVENT, BrokerAddress(broker.host, broker.port), state_dir=str(root / "old-tally")
    )
    apps, downloads = [], DownloadManager()
    for i in range(run.args.old_deputies):
        gate = gate_ids(run.args.gates)[i % run.args.gates]
        account = make_account(f"old-{i:02d}", "deputy", PASSWORD, gate=gate,
                               cost=KdfCost(n=2**10))  # fmt: skip
        person = Person(account.name, "old", gate)
        person.watching.add(run.figure)
        person.started = time.perf_counter()

        async def write(data: bytes, person: Person = person) -> None:
            person.take_frame(data.decode("utf-8", "replace"), time.perf_counter())
            if person.first_screen is None and person.seen:
                person.first_screen = min(person.seen.values()) - person.started

        async def nothing(*args: object) -> None:
            return None

        app = PersonApp(launch_for(account, config), PASSWORD, write_bytes=write,
                        write_str=nothing, close=nothing, download_manager=downloads)  # fmt: skip
        await app.start(*GATE_APP_SIZE)
        apps.append(app)
        run.persons.append(person)
    olds = [p for p in run.persons if p.kind == "old"]
    if olds:
        await until(lambda: all(p.first_screen is not None for p in olds), 120)
        firsts = [p.first_screen for p in olds if p.first_screen is not None]
        print(f"  {len(olds)} baseline gate apps (one Textual process a phone, started one "
              f"after the other): first screen p50 {statistics.median(firsts or [0]):.2f} s, "
              f"worst {max(firsts, default=float('nan')):.2f} s")  # fmt: skip
    return apps


def kinds(persons: list[Person]) -> dict[str, list[Person]]:
    return {k: [p for p in persons if p.kind == k] for k in KINDS}


async def sign_in_bursts(
    run: Run, base: str, ssl_: ssl.SSLContext, stop: asyncio.Event, who: list[str]
) -> list[asyncio.Future[None]]:
    """Those of kinds ``who`` sign in, ``--burst`` at the same moment, a kind at a time;
    each burst's first screens are waited for before the next burst."""
    tasks: list[asyncio.Future[None]] = []
    bursts = []
    for kind in who:
        ordered = kinds(run.persons)[kind]
        bursts += [ordered[i : i + run.args.burst] for i in range(0, len(ordered), run.args.burst)]
    for burst in bursts:
        began, cpu_began = time.perf_counter(), run.machine.cpu()
        tasks += [asyncio.ensure_future(_run(p, base, ssl_, stop, run.figure)) for p in burst]
        done = await until(
            lambda b=burst: all(p.first_screen is not None or p.error for p in b), 240
        )
        kind = " and ".join(sorted({PLURAL[p.kind] for p in burst}))
        spent = _spent_s(cpu_began, run.machine.cpu())
        firsts = [p.first_screen for p in burst if p.first_screen is not None]
        errors = [p.error for p in burst if p.error]
        worst = max(firsts, default=float("nan"))
        signs = [p.signed_in for p in burst if p.signed_in is not None]
        verdict = "ok" if done and not errors and worst < TARGET_FIRST_S else "OVER"
        print(
            f"  {len(burst)} {kind} signing in at once: first screen "
            f"p50 {statistics.median(firsts or [0]):.2f} s, worst {worst:.2f} s, all in "
            f"{time.perf_counter() - began:.1f} s (target every one within "
            f"{TARGET_FIRST_S:g} s: {verdict}); of which signing in: p50 "
            f"{statistics.median(signs or [0]):.2f} s, worst {max(signs, default=0):.2f} s"
            + (f"; {len(errors)} failed: {errors[0]}" if errors else "")
        )
        print(
            "    CPU spent until the last first screen: "
            + ", ".join(f"{k} {v:.1f} s" for k, v in spent.items())
            + f" (on {os.cpu_count()} cores at least "
            f"{sum(spent.values()) / (os.cpu_count() or 1):.1f} s)"
        )
    return tasks


def _spent_s(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds each group used between two readings (the processes that exist now)."""
    return {k: after[k] - before.get(k, 0.0) for k in ("server", "processes it started")}


async def _note(person: Person, k: int) -> None:
    """An inspector's note from the page, as ``inspector.js`` sends one."""
    note_id = f"{person.name}-{k:05d}-note"
    person.taps_sent[note_id] = time.perf_counter()
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
    action = {"id": note_id, "kind": "note", "ts": stamp, "text": f"round {k}"}
    await person.ws.send_json({"actions": [action]})  # type: ignore[attr-defined]


async def updates(run: Run, rounds: int) -> dict[str, list[float]]:
    """``rounds`` statuses; the latency per kind; deputies at tallies tap each round, and
    one inspector on the page in five sends a note."""
    latency: dict[str, list[float]] = {k: [] for k in (*KINDS, "tap", "note")}
    missed = dict.fromkeys(KINDS, 0)
    live_ws = [p for p in run.persons if getattr(p, "ws", None) is not None and not p.error]
    tappers = [p for p in live_ws if p.tally]
    writers = [p for p in live_ws if p.kind == "inspector"][::NOTE_EVERY]
    for k in range(1, rounds + 1):
        figure = run.figure + 37
        for person in tappers:
            tap_id = f"{person.name}-{k:05d}-tap"
            person.taps_sent[tap_id] = time.perf_counter()
            await person.ws.send_json({"taps": [{"id": tap_id, "d": "in"}]})  # type: ignore[attr-defined]
        for person in writers:
            await _note(person, k)
        t0 = run.publish(figure)
        live = [p for p in run.persons if p.started and not p.error]
        await until(lambda f=figure, ps=live: all(f in p.seen for p in ps), 10)
        for person in live:
            if figure in person.seen:
                latency[person.kind].append(person.seen[figure] - t0)
            else:
                missed[person.kind] += 1
                person.watching.discard(figure)
        await asyncio.sleep(max(0.0, t0 + run.args.interval - time.perf_counter()))
    senders = tappers + writers
    await until(lambda: all(len(p.taps_delivered) >= len(p.taps_sent) for p in senders), 10)
    for person in senders:
        for sent_id, sent in person.taps_sent.items():
            if sent_id in person.taps_delivered:
                kind = "tap" if person.kind == "deputy" else "note"
                latency[kind].append(person.taps_delivered[sent_id] - sent)
        person.taps_sent.clear()
        person.taps_delivered.clear()
    latency["missed"] = [float(missed[k]) for k in KINDS]
    return latency


def print_memory(title: str, memory: dict[str, tuple[int, float, float]]) -> tuple[float, float]:
    """One line per group; returns the serve side's (RSS, PSS) in MiB (server + its apps)."""
    print(f"{title}:")
    for name, (count, rss, pss) in memory.items():
        if count:
            print(f"  {name}: {count} process{'es' if count != 1 else ''}, "
                  f"RSS {rss:.0f} MiB, PSS {pss:.0f} MiB")  # fmt: skip
    rss = memory["server"][1] + memory["processes it started"][1]
    pss = memory["server"][2] + memory["processes it started"][2]
    return rss, pss


def print_latency(latency: dict[str, list[float]]) -> None:
    print("status publish -> change on screen:")
    missed = latency.pop("missed")
    for kind, values in latency.items():
        if kind == "tap":
            if values:
                print(f"  tap -> 'sent' on the deputy's phone: {quantiles(values)}")
            continue
        if kind == "note":
            if values:
                print(f"  note -> 'delivered' on the inspector's page (their own broker "
                      f"account): {quantiles(values)}")  # fmt: skip
            continue
        gone = int(missed[KINDS.index(kind)])
        if not values and not gone:
            continue  # no session of this kind in this run
        verdict = "ok" if values and p95(values) < TARGET_P95_S and not gone else "OVER"
        target = "" if kind in ("dashboard", "old") else (
            f" (target p95 < {TARGET_P95_S:g} s: {verdict})")  # fmt: skip
        print(f"  {PLURAL[kind]}: {quantiles(values)}, missed {gone}{target}")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


async def measure(args: argparse.Namespace, root: Path, broker: MosquittoBroker) -> None:
    certs = make_certs(root / "certs", ["127.0.0.1"])
    persons = people(
        root / "users.json", args.deputies, args.inspectors, args.gates, args.dashboards
    )
    publisher = Publisher(broker)
    order = wire.GateCommand(admit=True, attendance=1000, hold_at=40_000, resume_below=39_000)
    for gate in gate_ids(args.gates):
        publisher.send(TOPICS.gate_command(gate), wire.encode(order))
    publisher.send(TOPICS.aggregator_availability, b"online")
    base, server = start_server(root, broker, certs)
    assert broker.process is not None
    run = Run(args, persons, publisher, Machine(server.pid, broker.process.pid))
    run.publish(run.figure)
    stop = asyncio.Event()
    tasks: list[asyncio.Future[None]] = []
    olds: list[Any] = []
    try:
        await asyncio.sleep(2)
        cpu0, wall0 = run.machine.cpu(), time.perf_counter()
        await run.ticking(args.idle)
        cpu1 = run.machine.cpu()
        baseline = run.machine.memory()
        print_memory("baseline, the same run: the server signed in by nobody", baseline)
        print(f"  CPU with a status every {args.interval:g} s, in cores: "
              f"{cores(cpu0, cpu1, time.perf_counter() - wall0)}")  # fmt: skip
        olds = await baseline_gate_apps(run, broker, root)
        ssl_ = ssl.create_default_context(cafile=str(certs["ca_crt"]))
        print(f"time to first screen ({args.burst} at a time, sign-in with the real scrypt cost):")
        tasks = await sign_in_bursts(run, base, ssl_, stop, ["deputy", "inspector"])
        await asyncio.sleep(2)
        cpu0, wall0 = run.machine.cpu(), time.perf_counter()
        latency = await updates(run, args.updates)
        cpu1 = run.machine.cpu()
        sessions = args.deputies + args.inspectors
        rss, pss = print_memory(
            f"with {sessions} sessions ({args.deputies} deputies at {args.gates} gates, "
            f"{args.inspectors} inspectors on the page)", run.machine.memory(),
        )  # fmt: skip
        verdict = "ok" if pss / 1024 < TARGET_GB else "OVER"
        print(
            f"  the command post's share (the server and all it started): PSS {pss:.0f} MiB "
            f"(target {sessions} sessions under {TARGET_GB:g} GB: {verdict}); RSS {rss:.0f} MiB"
        )
        phones = args.deputies + args.inspectors
        if phones:
            extra = (run.machine.memory()["server"][1] - baseline["server"][1]) / phones
            print(f"  the server grew {extra:.2f} MiB RSS a phone over the baseline")
        if olds:
            count, old_rss, old_pss = run.machine.memory()["baseline gate apps"]
            print(
                f"  a baseline gate app (the design before, a phone each): RSS "
                f"{old_rss / max(1, count):.0f} MiB, PSS {old_pss / max(1, count):.0f} MiB"
            )
        print(f"CPU during the updates, in cores: {cores(cpu0, cpu1, time.perf_counter() - wall0)}")
        print_latency(latency)
        if args.dashboards:
            await compare_dashboards(run, base, ssl_, stop, tasks, pss)
    finally:
        stop.set()
        await asyncio.gather(*tasks, *(app.stop() for app in olds), return_exceptions=True)
        publisher.close()
        ended = await until(
            lambda: not [p for p in _children(server.pid) if not _is_fork_server(p)], 30
        )
        server.terminate()
        server.wait(30)
    print(f"after the pages closed, every app process ended: {'yes' if ended else 'NO'}")
    errors = [p.error for p in persons if p.error]
    if errors:
        print(f"{len(errors)} sessions failed, e.g. {errors[0]}")


async def compare_dashboards(
    run: Run,
    base: str,
    ssl_: ssl.SSLContext,
    stop: asyncio.Event,
    tasks: list[asyncio.Future[None]],
    pss_before: float,
) -> None:
    """The full dashboard, one app process an inspector, in the same run: first screens,
    memory each, and publish → screen in a second round beside everyone else."""
    print(f"for comparison, {run.args.dashboards} more inspectors on the full dashboard "
          f"(one Textual app each, {DASHBOARD_SIZE[0]}x{DASHBOARD_SIZE[1]}):")  # fmt: skip
    tasks += await sign_in_bursts(run, base, ssl_, stop, ["dashboard"])
    await asyncio.sleep(2)
    _, pss = print_memory("with them", run.machine.memory())
    count = len(kinds(run.persons)["dashboard"])
    print(f"  a full dashboard costs {(pss - pss_before) / max(1, count):.0f} MiB PSS "
          "(its app, and its share of the fork server)")  # fmt: skip
    cpu0, wall0 = run.machine.cpu(), time.perf_counter()
    latency = await updates(run, max(5, run.args.updates // 2))
    print(f"  CPU during the second round, in cores: "
          f"{cores(cpu0, run.machine.cpu(), time.perf_counter() - wall0)}")  # fmt: skip
    print_latency(latency)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deputies", type=int, default=100, help="deputies' phones (100)")
    parser.add_argument(
        "--inspectors", type=int, default=50, help="inspectors on the page, from a phone (50)"
    )
    parser.add_argument(
        "--dashboards", type=int, default=5,
        help="more inspectors on the full dashboard, one app process each, for comparison "
        "in the same run (5)",
    )  # fmt: skip
    parser.add_argument("--gates", type=int, default=50, help="gates the deputies stand at (50)")
    parser.add_argument("--burst", type=int, default=50, help="people signing in at once (50)")
    parser.add_argument("--updates", type=int, default=30, help="statuses to time (30)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between statuses")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of the baseline")
    parser.add_argument(
        "--old-deputies", type=int, default=0,
        help="gate views run the way they were before the hubs, one process each, for "
        "comparison in the same run (0)",
    )  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kent-serve-bench-") as folder:
        root = Path(folder)
        broker = MosquittoBroker(root / "broker").start()
        try:
            size = len(status(1, args.gates))
            print(f"{os.cpu_count()} cores, {load_average()}; a status of {args.gates} gates "
                  f"(one in {TALLY_EVERY} with a manual tally), {LOTS} lots: {size} bytes, "
                  f"every {args.interval:g} s")  # fmt: skip
            asyncio.run(measure(args, root, broker))
        finally:
            broker.stop()
            print(f"at the end: {load_average()}")


if __name__ == "__main__":
    main()
