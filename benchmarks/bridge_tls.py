"""What a remote property's bridge gets through its TLS leg: stunnel against the old relay.

The bridge of ``kent-ops deploy bridge`` crosses the link in plain MQTT to a TLS leg on
the property machine's loopback (docs/security.md, "A flapping bridge link"). That leg
is stunnel now; before, it was ``kent-ops-link``, a relay of our own in Python
(``kent_ops/broker/link.py``, read here from the git history: its last version before
it was removed, run by a bare ``python3 -I -S`` as it was deployed). The relay is this
benchmark's same-run baseline.

Two real Mosquittos as the bridge tests build them (tests/integration/bridge_support.py:
the property's broker runs the generated configuration, the command post's has TLS,
passwords and the ACL), one TLS leg at a time on the same loopback port, the two legs
alternating over ``--rounds`` rounds (the first leg alternating too). Each round, each leg:

1. **Drain.** ``--readings`` gate readings are held at the property's broker while the
   leg is down (an outage), then the leg starts: readings per second from the first
   reading at the command post to the last. This is what the link's return costs: the
   bridge's in-flight window (20) paces the drain by the round trip through the leg.
2. **Latency.** ``--samples`` readings one at a time: publish (QoS 1) at the property →
   received at the command post; p50 and p99.
3. **CPU** the leg's process used for the drain, per 1,000 readings (utime + stime).

Every reading must arrive (the count is checked); every wait is bounded. Run:
``python benchmarks/bridge_tls.py [--readings 20000] [--samples 300] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import paho.mqtt.client as mqtt

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "integration")]

from bridge_support import (  # noqa: E402
    TOPICS,
    Site,
    StunnelProcess,
    build_site,
    two_property_permit,
)

from kent_ops.broker.bridge import tunnel_for  # noqa: E402
from kent_ops.broker.client import make_client  # noqa: E402
from kent_ops.broker.tunnel import Tunnel  # noqa: E402
from kent_ops.core.permit import load_permit  # noqa: E402

GATE = "meadow-road"
TOPIC = TOPICS.gate_count(GATE)
RELAY = "kent_ops/broker/link.py"
WAIT_S = 300.0


def old_relay_source() -> str:
    """The relay's last version, from the commit before the one that removed it."""
    removed = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--diff-filter=D", "--", RELAY],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    if not removed:
        raise SystemExit(f"bridge_tls: {RELAY} was never removed in this checkout's history")
    return subprocess.run(
        ["git", "show", f"{removed}^:{RELAY}"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip


class RelayProcess(StunnelProcess):
    """The old ``kent-ops-link``, as deployed: one file, Debian's bare Python."""

    source = ""

    def command(self) -> list[str]:
        script = self.workdir / "kent-ops-link.py"
        script.write_text(self.source)
        t = self.tunnel
        return [
            sys.executable, "-I", "-S", str(script), "--listen", f"127.0.0.1:{t.listen_port}",
            "--to", f"{t.host}:{t.port}", "--cafile", str(t.cafile),
        ]  # fmt: skip


def cpu_s(pid: int) -> float:
    """User + system seconds of a process so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Arrivals:
    """Each reading's arrival at the command post, by its seq."""

    at: dict[int, float] = field(default_factory=dict)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        now = time.perf_counter()
        seq = json.loads(msg.payload)["seq"]
        with self.cond:
            self.at.setdefault(seq, now)
            self.cond.notify_all()

    def wait(self, seqs: range, what: str) -> None:
        deadline = time.monotonic() + WAIT_S
        with self.cond:
            while not all(s in self.at for s in seqs):
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = sum(s not in self.at for s in seqs)
                    raise SystemExit(f"bridge_tls: {missing} readings never arrived ({what})")
                self.cond.wait(min(left, 0.5))


@dataclass
class Figures:
    drain: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


class Bench:
    """One site, a sensor publishing at the property, a subscriber at the command post."""

    def __init__(self, site: Site, legs: dict[str, StunnelProcess]) -> None:
        self.site, self.legs = site, legs
        self.seq = 0
        self.arrivals = Arrivals()
        self.post = make_client(site.central_address("dashboard"), "bench-post")
        self.post.on_message = self.arrivals.on_message
        subscribed = threading.Event()
        self.post.on_connect = lambda c, *a: c.subscribe(TOPIC, qos=1)
        self.post.on_subscribe = lambda *a: subscribed.set()
        self.post.connect("127.0.0.1", site.central.port)
        self.post.loop_start()
        self.sensor = make_client(site.property_address(f"sensor-{GATE}"), f"bench-{GATE}")
        self.sensor.connect("127.0.0.1", site.prop.port)
        self.sensor.loop_start()
        if not subscribed.wait(10):
            raise SystemExit("bridge_tls: the command post's subscriber did not subscribe")

    def publish(self, count: int) -> range:
        first = self.seq + 1
        infos = []
        for _ in range(count):
            self.seq += 1
            payload = json.dumps({"seq": self.seq, "in_total": self.seq, "out_total": 0})
            infos.append(self.sensor.publish(TOPIC, payload.encode(), qos=1))
        for info in infos:
            info.wait_for_publish(timeout=WAIT_S)
        return range(first, self.seq + 1)

    def round(self, name: str, readings: int, samples: int, out: Figures) -> None:
        for leg in self.legs.values():
            leg.stop()  # the link is down: the property's broker holds what comes
        held = self.publish(readings)
        leg = self.legs[name].start()
        assert leg.process is not None
        before = cpu_s(leg.process.pid)
        self.arrivals.wait(held, f"{name}, drain")
        spent = cpu_s(leg.process.pid) - before
        times = [self.arrivals.at[s] for s in held]
        out.drain.append((len(held) - 1) / (max(times) - min(times)))
        out.cpu.append(spent / readings * 1000)
        latencies = []
        for _ in range(samples):
            start = time.perf_counter()
            one = self.publish(1)
            self.arrivals.wait(one, f"{name}, latency")
            latencies.append((self.arrivals.at[one[0]] - start) * 1000)
        latencies.sort()
        out.p50.append(statistics.median(latencies))
        out.p99.append(latencies[min(len(latencies) - 1, round(0.99 * len(latencies)))])

    def close(self) -> None:
        for client in (self.sensor, self.post):
            client.disconnect()
            client.loop_stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readings", type=int, default=20_000, help="held, then drained")
    ap.add_argument("--samples", type=int, default=300, help="one-at-a-time latencies")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    RelayProcess.source = old_relay_source()
    figures = {"stunnel": Figures(), "relay": Figures()}
    with tempfile.TemporaryDirectory(prefix="kent-bridge-tls-") as tmp:
        tmp_path = Path(tmp)
        permit = load_permit(two_property_permit(tmp_path))
        site = build_site(tmp_path, permit)
        tunnel: Tunnel = tunnel_for(site.settings)
        legs = {"stunnel": site.tunnel, "relay": RelayProcess(tmp_path / "relay", tunnel)}
        bench = Bench(site, legs)
        try:
            for r in range(args.rounds):
                order = ["stunnel", "relay"] if r % 2 == 0 else ["relay", "stunnel"]
                for name in order:
                    bench.round(name, args.readings, args.samples, figures[name])
                    f = figures[name]
                    print(
                        f"round {r + 1} {name:8}: drain {f.drain[-1]:8,.0f} readings/s, "
                        f"latency p50 {f.p50[-1]:5.2f} ms p99 {f.p99[-1]:6.2f} ms, "
                        f"CPU {f.cpu[-1] * 1000:6.1f} ms per 1,000 readings",
                        flush=True,
                    )
        finally:
            bench.close()
            legs["relay"].stop()
            site.stop()
    s, r = figures["stunnel"], figures["relay"]
    med = statistics.median
    print(
        f"\nmedians over {args.rounds} rounds, {args.readings:,} readings drained, "
        f"{args.samples} latencies each, every reading at the command post:\n"
        f"  stunnel: {med(s.drain):8,.0f} readings/s, p50 {med(s.p50):.2f} ms, "
        f"p99 {med(s.p99):.2f} ms, CPU {med(s.cpu) * 1000:.1f} ms per 1,000\n"
        f"  relay:   {med(r.drain):8,.0f} readings/s, p50 {med(r.p50):.2f} ms, "
        f"p99 {med(r.p99):.2f} ms, CPU {med(r.cpu) * 1000:.1f} ms per 1,000\n"
        f"  stunnel / relay: drain {med(s.drain) / med(r.drain):.2f}x, "
        f"p50 {med(s.p50) / med(r.p50):.2f}x, CPU {med(s.cpu) / med(r.cpu):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
