"""How much a SIGKILL of the field broker loses, and what each of its saves costs.

Mosquitto keeps the messages it holds for a persistent session (the aggregator's, while
the aggregator is down; the bridge's on a property, while the link is down) in memory,
and writes its whole database to disk now and then (``autosave_interval``, in seconds;
with ``autosave_on_changes true``, in changes: a message queued for an absent
subscriber, one a subscriber acknowledged, a retained message, a subscription). A
SIGKILL or a power cut loses what it acknowledged since its last save. Each save
writes everything held, fsyncs it, and stops the broker meanwhile (it has one thread).

1. **The window.** A festival's traffic, at QoS 1, into a real Mosquitto with each
   persistence setting in turn: 100 gate counters (a reading every ``--gate-every``
   seconds each), 2 staff stations (a badge scan every 2 s each), 3 inspectors (an
   action every 20 s each), the aggregator's retained status and each sensor's
   retained availability. The aggregator's persistent session is subscribed, then
   gone (it crashed; systemd restarts it), so the broker holds every message for it.
   After a random 10 to 25 s the broker is SIGKILLed and restarted; the aggregator's
   session reconnects and takes what the broker kept. Lost: messages the broker
   acknowledged to their publisher (PUBACK received) that never reach the aggregator.
   ``--kills`` rounds per setting; the baseline is the setting shipped before
   (``autosave_interval 10``), in the same run. With ``--aggregator-up`` one more round
   per setting with the aggregator connected throughout.
2. **The cost of a save.** With autosave off, the aggregator's session is filled to
   sizes a festival reaches (nothing held; 30 s, 5 min, 30 min of the traffic above
   held while the aggregator is down), and saves are asked for with SIGUSR1 (the same
   code as an autosave). Each: the broker's stall (the longest wait for a PUBACK of a
   client publishing one message at a time, against the same client's longest wait
   in as long a time without a save: the same-run baseline), the database's size (the
   bytes each save writes), the bytes the broker wrote to storage (``/proc/PID/io``)
   and its CPU time per save.

The figures are wall-clock times on this machine (its load average is printed); the
broker's data folder is under ``--dir`` (default: the system's temporary folder),
which must be on a real disk for the fsync to cost what it costs.

Run: ``python benchmarks/broker_window.py`` (``--kills 3 --sizes 0,1000`` for a look).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.broker.persistence import FIELD_AUTOSAVE
from kent_ops.core import wire
from kent_ops.core.wire import Topics

EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
GATES, STATIONS, INSPECTORS = 100, 2, 3
STATION_EVERY_S, INSPECTOR_EVERY_S = 2.0, 20.0
STATUS_BYTES = 30_000
"""About the size of the aggregator's retained status with 100 gates (270 bytes a gate)."""
SHIPPED_BEFORE = "autosave_interval 10\n"
"""The field broker's setting before this measurement: the same-run baseline."""
AGGREGATOR_ID = "kent-ops-aggregator-window-bench"
PUBLISHERS = 8
"""Connections the devices' messages go out on (the broker does not care which)."""
QUIET_S = 2.0
"""The aggregator's session has taken everything once nothing new came for this long."""


def festival_rate(gate_every_s: float) -> float:
    return GATES / gate_every_s + STATIONS / STATION_EVERY_S + INSPECTORS / INSPECTOR_EVERY_S


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    key: tuple[str, int]


def festival(gate_every_s: float, seed: int) -> Iterator[tuple[float, Message]]:
    """The devices' messages in the order they are sent, each with its time from the start."""
    rng = random.Random(seed)
    sources: list[tuple[float, str, str]] = [
        *((gate_every_s, "gate", f"gate-{g:03d}") for g in range(GATES)),
        *((STATION_EVERY_S, "station", f"station-{s}") for s in range(STATIONS)),
        *((INSPECTOR_EVERY_S, "inspector", f"insp-{i}") for i in range(INSPECTORS)),
    ]
    due = [(rng.uniform(0, every), i) for i, (every, _, _) in enumerate(sources)]
    seqs = [0] * len(sources)
    while True:
        due.sort()
        at, i = due[0]
        every, kind, name = sources[i]
        seqs[i] += 1
        yield at, _message(kind, name, seqs[i])
        due[0] = (at + every * rng.uniform(0.8, 1.2), i)


def _message(kind: str, name: str, seq: int) -> Message:
    now = datetime.now(UTC)
    if kind == "gate":
        count = wire.GateCount(seq, now, 40 * seq, 31 * seq)
        return Message(TOPICS.gate_count(name), wire.encode_reading(count, None), (name, seq))
    if kind == "station":
        scan = wire.Badge(seq, now, f"B-{seq:05d}", "nurse", "on")
        return Message(TOPICS.staff_badge(name), wire.encode_reading(scan, None), (name, seq))
    text = f"walked the north fence, note {seq}: gates clear, exits marked"
    note = wire.encode(wire.Note(now, text, None))
    return Message(TOPICS.inspector(name, "note"), note, (name, seq))


def _key(payload: bytes, topic: str) -> tuple[str, int]:
    """The sender and number of a message, read back from what the aggregator received."""
    if "/inspector/" in topic:
        name = topic.split("/inspector/")[1].split("/")[0]
        return name, int(json.loads(payload)["text"].split("note ")[1].split(":")[0])
    return topic.rsplit("/", 2)[-2], int(json.loads(payload)["seq"])


# --- the broker and its clients ------------------------------------------------------------


def start_broker(work: Path, autosave: str, *, log_saves: bool = False) -> MosquittoBroker:
    extra = "log_type information\n" if log_saves else ""
    return MosquittoBroker(work, autosave=autosave, extra_config=extra).start()


def connected(address: BrokerAddress, client_id: str = "", **options: object) -> mqtt.Client:
    client = make_client(address, client_id, **options)  # type: ignore[arg-type]
    client.reconnect_delay_set(min_delay=1, max_delay=2)
    client.max_inflight_messages_set(1000)
    ready = threading.Event()
    client.on_connect = lambda *a: ready.set()
    client.connect(address.host, address.port, keepalive=30)
    client.loop_start()
    if not ready.wait(10):
        raise RuntimeError("a benchmark client could not connect")
    return client


def put_retained(address: BrokerAddress) -> None:
    """What a festival's broker holds retained: each sensor's availability and the status."""
    client = connected(address)
    infos = [
        client.publish(TOPICS.availability(f"gate-{g:03d}"), b"online", qos=1, retain=True)
        for g in range(GATES)
    ]
    infos.append(client.publish(TOPICS.status, b"{" + b" " * STATUS_BYTES + b"}", 1, True))
    for info in infos:
        info.wait_for_publish(10)
    client.disconnect()
    client.loop_stop()


class Aggregator:
    """The aggregator's persistent session: everything of the event, QoS 1, acknowledged."""

    def __init__(self, address: BrokerAddress) -> None:
        self.address = address
        self.received: set[tuple[str, int]] = set()
        self.last_at = time.monotonic()
        self._lock = threading.Lock()
        self.client: mqtt.Client | None = None

    def connect(self) -> None:
        client = make_client(self.address, AGGREGATOR_ID, clean_start=False)
        subscribed = threading.Event()
        client.on_connect = lambda c, *a: c.subscribe(TOPICS.everything, qos=1)
        client.on_subscribe = lambda *a: subscribed.set()
        client.on_message = self._on_message
        client.connect(self.address.host, self.address.port, keepalive=30)
        client.loop_start()
        if not subscribed.wait(10):
            raise RuntimeError("the aggregator's session could not subscribe")
        self.client = client

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        if msg.retain or msg.topic.endswith(("/status", "/availability")):
            return
        with self._lock:
            self.received.add(_key(bytes(msg.payload), msg.topic))
            self.last_at = time.monotonic()

    def crash(self) -> None:
        """Gone without a word, as a killed process is: the session stays at the broker."""
        if self.client is not None:
            self.client.loop_stop()
            sock = self.client.socket()
            if sock is not None:
                sock.close()
            self.client = None

    def drain(self, most_s: float = 120.0) -> None:
        """Wait until what the broker held has come (nothing new for a while)."""
        deadline = time.monotonic() + most_s
        with self._lock:
            self.last_at = time.monotonic()
        while time.monotonic() < deadline:
            with self._lock:
                if time.monotonic() - self.last_at > QUIET_S:
                    return
            time.sleep(0.1)
        raise RuntimeError("the aggregator's session was still receiving after two minutes")


class Devices:
    """The festival's devices publishing at their rates (a thread); which of their
    messages the broker acknowledged."""

    def __init__(self, address: BrokerAddress, gate_every_s: float, seed: int) -> None:
        self._sent: list[tuple[mqtt.MQTTMessageInfo, tuple[str, int]]] = []
        self._stop = threading.Event()
        self._schedule = festival(gate_every_s, seed)
        self.clients = [connected(address) for _ in range(PUBLISHERS)]
        self._thread = threading.Thread(target=self._run, name="devices", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        start = time.monotonic()
        for n, (at, message) in enumerate(self._schedule):
            if self._stop.wait(max(0.0, start + at - time.monotonic())):
                return
            info = self.clients[n % PUBLISHERS].publish(message.topic, message.payload, qos=1)
            self._sent.append((info, message.key))

    def stop(self) -> set[tuple[str, int]]:
        """Once the broker is gone: no more messages; those it acknowledged.

        Each client has read what the broker sent before it died (its PUBACKs too) once
        it has noticed the connection closed."""
        self._stop.set()
        self._thread.join(10)
        deadline = time.monotonic() + 10
        while any(c.is_connected() for c in self.clients) and time.monotonic() < deadline:
            time.sleep(0.05)
        return {key for info, key in self._sent if _acknowledged(info)}

    def close(self) -> None:
        self._stop.set()
        for client in self.clients:
            client.disconnect()
            client.loop_stop()


def _acknowledged(info: mqtt.MQTTMessageInfo) -> bool:
    try:
        return info.is_published()
    except RuntimeError:  # paho refused it: the client was not connected
        return False


# --- 1. the window --------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    phase: float
    acked: int
    lost: int


def save_cycle_s(autosave: str, rate: float) -> float:
    """About how long the broker goes between saves at ``rate`` messages a second."""
    lines = dict(line.split(" ", 1) for line in autosave.strip().splitlines())
    interval = int(lines["autosave_interval"])
    if lines.get("autosave_on_changes") == "true":
        return interval / rate
    return interval + 1.0  # Mosquitto saves once more than ``interval`` whole seconds passed


def one_kill(
    work: Path, autosave: str, gate_every_s: float, phase: float, *, aggregator_up: bool
) -> Round:
    """Kill the broker ``phase`` of the way from one save to the next, then count."""
    broker = start_broker(work, autosave)
    address = BrokerAddress(broker.host, broker.port)
    database = work / "data" / "mosquitto.db"
    aggregator = Aggregator(address)
    devices: Devices | None = None
    cycle = save_cycle_s(autosave, festival_rate(gate_every_s))
    try:
        put_retained(address)
        aggregator.connect()
        if not aggregator_up:
            aggregator.crash()
        devices = Devices(address, gate_every_s, seed=int(phase * 1000))
        devices.start()
        time.sleep(3.0)  # the festival is under way
        _saved(database, _identity(database), within_s=2 * cycle + 10)  # a save just now
        time.sleep(phase * cycle)
        assert broker.process is not None
        broker.process.kill()  # SIGKILL: a power cut, the OOM killer
        acked = devices.stop()
        broker.process.wait(10)
        broker.process = None
        aggregator.crash()
        devices.close()
        broker.start()
        aggregator.connect()
        aggregator.drain()
    finally:
        aggregator.crash()
        if devices is not None:
            devices.close()
        broker.stop()
    return Round(phase, len(acked), len(acked - aggregator.received))


# --- 2. the cost of a save ------------------------------------------------------------------


class Probe:
    """A bare MQTT 3.1.1 client on a socket: one QoS 1 message at a time, each PUBACK timed.

    Its topic has no subscriber, so it changes nothing the broker saves."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ident = b"window-probe"
        body = b"\x00\x04MQTT\x04\x02\x00\x3c" + struct.pack("!H", len(ident)) + ident
        self.sock.sendall(b"\x10" + _length(len(body)) + body)
        if self._read(4)[:2] != b"\x20\x02":
            raise RuntimeError("the probe was not let in")
        self.mid = 0
        self.waits: list[tuple[float, float]] = []
        """(when sent, seconds until its PUBACK), in order."""

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise RuntimeError("the broker closed the probe")
            data += chunk
        return data

    def publish(self) -> None:
        self.mid = self.mid % 65535 + 1
        topic = b"bench/probe"
        body = struct.pack("!H", len(topic)) + topic + struct.pack("!H", self.mid) + b"x"
        sent = time.perf_counter()
        self.sock.sendall(b"\x32" + _length(len(body)) + body)
        if self._read(4) != b"\x40\x02" + struct.pack("!H", self.mid):
            raise RuntimeError("the probe got something else than its PUBACK")
        self.waits.append((sent, time.perf_counter() - sent))

    def close(self) -> None:
        self.sock.close()


def _length(n: int) -> bytes:
    out = bytearray()
    while True:
        n, digit = divmod(n, 128)
        out.append(digit | (0x80 if n else 0))
        if not n:
            return bytes(out)


def hold(address: BrokerAddress, count: int, gate_every_s: float) -> None:
    """Queue ``count`` festival messages for the (absent) aggregator, as fast as they go."""
    client = connected(address)
    infos = []
    for n, (_, message) in enumerate(festival(gate_every_s, seed=count)):
        if n >= count:
            break
        infos.append(client.publish(message.topic, message.payload, qos=1))
        if len(infos) >= 500:
            for info in infos:
                info.wait_for_publish(30)
            infos.clear()
    for info in infos:
        info.wait_for_publish(30)
    client.disconnect()
    client.loop_stop()


def written_bytes(pid: int) -> int:
    """Bytes the process has written to storage (``/proc/PID/io``)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        name, _, value = line.partition(": ")
        if name == "write_bytes":
            return int(value)
    raise RuntimeError("no write_bytes in /proc/PID/io")


def cpu_seconds(pid: int) -> float:
    """The process's time on a CPU, to the nanosecond (``/proc/PID/schedstat``)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


@dataclass(frozen=True)
class SaveCost:
    held: int
    db_bytes: int
    written_bytes: float
    cpu_s: float
    stall_s: float
    baseline_s: float


def _saved(database: Path, before: tuple[int, int], within_s: float = 60.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if database.exists():
            stat = database.stat()
            if (stat.st_ino, stat.st_mtime_ns) != before:
                return
        time.sleep(0.002)
    raise RuntimeError("the broker did not save its database")


def _saving(database: Path, before: tuple[int, int], within_s: float = 5.0) -> bool:
    """Wait until the broker is writing its ``.new`` file: True, or False if the save
    was already over when first looked at (too short to catch)."""
    new = database.with_name(database.name + ".new")
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if new.exists():
            return True
        if _identity(database) != before:
            return False
    raise RuntimeError("SIGUSR1 did not begin a save")


def _identity(database: Path) -> tuple[int, int]:
    if not database.exists():
        return (0, 0)
    stat = database.stat()
    return stat.st_ino, stat.st_mtime_ns


def save_cost(work: Path, held: int, gate_every_s: float, saves: int) -> SaveCost:
    """What one save costs with ``held`` messages queued for the absent aggregator.

    The broker is idle between saves, waiting in ``epoll_wait``: SIGUSR1 interrupts it,
    it saves at once, and a PUBACK asked for right after the signal waits for the save.
    """
    broker = start_broker(work, "autosave_interval 0\n")  # saves only when asked
    address = BrokerAddress(broker.host, broker.port)
    try:
        put_retained(address)
        aggregator = Aggregator(address)
        aggregator.connect()
        aggregator.crash()
        hold(address, held, gate_every_s)
        assert broker.process is not None
        pid = broker.process.pid
        database = work / "data" / "mosquitto.db"
        probe = Probe(broker.port)
        stalls, quiet, cpu, written = [], [], [], []
        try:
            for _ in range(saves):
                time.sleep(0.2)
                probe.publish()
                quiet.append(probe.waits[-1][1])
                time.sleep(0.2)
                before, cpu_before, written_before = (
                    _identity(database),
                    cpu_seconds(pid),
                    written_bytes(pid),
                )
                os.kill(pid, signal.SIGUSR1)  # persist__backup, as an autosave calls it
                if _saving(database, before):  # it has begun: the probe waits for the rest
                    probe.publish()
                    stalls.append(probe.waits[-1][1])
                _saved(database, before)
                time.sleep(0.05)
                cpu.append(cpu_seconds(pid) - cpu_before)
                written.append(written_bytes(pid) - written_before)
        finally:
            probe.close()
        return SaveCost(
            held=held,
            db_bytes=database.stat().st_size,
            written_bytes=statistics.median(written),
            cpu_s=statistics.median(cpu),
            stall_s=statistics.median(stalls) if stalls else 0.0,
            baseline_s=statistics.median(quiet),
        )
    finally:
        broker.stop()


# --- the run ----------------------------------------------------------------------------------


def _settings(text: str) -> str:
    return text.replace("\n", "; ").strip("; ")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--kills", type=int, default=5, help="kills per setting (default 5)")
    p.add_argument("--gate-every", type=float, default=3.0, metavar="S",
                   help="seconds between one gate's readings (default 3)")  # fmt: skip
    p.add_argument("--sizes", default="0,1000,10000,60000",
                   help="messages held when saves are timed (default %(default)s)")  # fmt: skip
    p.add_argument("--saves", type=int, default=9, help="saves timed per size (default 9)")
    p.add_argument("--autosave", action="append", default=[], metavar="LINES",
                   help="another setting to try, lines split by ';'")  # fmt: skip
    p.add_argument("--aggregator-up", action="store_true",
                   help="one more kill per setting with the aggregator connected")  # fmt: skip
    p.add_argument("--dir", default=None, help="where the brokers keep their data")
    return p


def window(root: Path, settings: list[str], args: argparse.Namespace) -> None:
    print("\n1. Acknowledged messages a SIGKILL lost, the aggregator down, killed at moments "
          "spread evenly between two saves")  # fmt: skip
    phases = [(k + 0.5) / args.kills for k in range(args.kills)]
    for n, setting in enumerate(settings):
        label = ("baseline: " if n == 0 else "shipped: " if n == 1 else "") + _settings(setting)
        rounds = [
            one_kill(root / f"w{n}-{k}", setting, args.gate_every, phase, aggregator_up=False)
            for k, phase in enumerate(phases)
        ]
        losses = [r.lost for r in rounds]
        acked = statistics.mean(r.acked for r in rounds)
        print(f"  {label:<56} lost {min(losses)} to {max(losses)} (mean "
              f"{statistics.mean(losses):.0f}) of {acked:.0f}; by phase {losses}")  # fmt: skip
        if args.aggregator_up:
            up = one_kill(root / f"u{n}", setting, args.gate_every, 0.9, aggregator_up=True)
            print(f"  {'':<56} the aggregator up: lost {up.lost} of {up.acked}")


def costs(root: Path, settings: list[str], args: argparse.Namespace, rate: float) -> None:
    print("\n2. One save (held: messages queued for the absent aggregator; stall: a PUBACK "
          "asked for during a save, baseline: one without)")  # fmt: skip
    found = []
    for size in (int(x) for x in args.sizes.split(",")):
        cost = save_cost(root / f"s{size}", size, args.gate_every, args.saves)
        found.append(cost)
        print(f"  held {cost.held:>7,} ({cost.held / rate / 60:4.1f} min of the festival): "
              f"database {cost.db_bytes / 1e6:5.2f} MB, written {cost.written_bytes / 1e6:5.2f} "
              f"MB, CPU {cost.cpu_s * 1e3:4.1f} ms, stall {cost.stall_s * 1e3:5.1f} ms "
              f"(baseline {cost.baseline_s * 1e3:.1f} ms)")  # fmt: skip
    print(f"\n   At the festival's rate with the aggregator down ({rate:.1f} messages a second):")
    for n, setting in enumerate(settings[:2]):
        every = save_cycle_s(setting, rate)
        label = ("baseline: " if n == 0 else "shipped: ") + _settings(setting)
        print(f"   {label}: a save every {every:.2f} s")
        for cost in found:
            busy = cost.stall_s / every
            print(f"     held {cost.held:>7,}: {busy:6.1%} of the broker's time saving, "
                  f"{cost.written_bytes / every / 1e6:6.2f} MB/s written")  # fmt: skip


def main() -> int:
    args = _parser().parse_args()
    rate = festival_rate(args.gate_every)
    extra = [a.replace(";", "\n") + "\n" for a in args.autosave]
    settings = [SHIPPED_BEFORE, FIELD_AUTOSAVE, *extra]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; a festival's "
          f"traffic: {rate:.1f} messages a second ({GATES} gates every {args.gate_every:g} s, "
          f"{STATIONS} staff stations, {INSPECTORS} inspectors)")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="broker-window-", dir=args.dir) as tmp:
        root = Path(tmp)
        if args.kills:
            window(root, settings, args)
        if args.saves:
            costs(root, settings, args, rate)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
