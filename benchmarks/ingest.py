"""How fast ``kent-ops run`` takes gate messages, against a bare paho subscriber.

The ingest measurement, all at QoS 1 through one private Mosquitto (the same no-drop
configuration the tests and the field use), in one run:

1. **Throughput.** N gate messages are queued at the broker for a persistent session
   while its subscriber is away, then the subscriber connects and drains them:
   (a) a bare paho subscriber that only counts (auto-ack), timed from its first
   message to its last; (b) ``kent-ops run`` with the evidence log on, timed from its
   first message's receive time (from the log) to the retained status that shows all
   N. Queuing first takes the publisher's own speed out of the figure. Prints both
   rates, their ratio and the messages lost (received minus sent; must be 0).
2. **Latency.** With ``kent-ops run`` live, one gate publishes at a steady rate
   (default 1,000/s); for each message, the time from publish to the first status
   whose count includes it. Prints p50/p99 (target: p99 under 200 ms; the status is
   coalesced to 10 a second).

Bounded: every wait has a deadline. Run: ``python benchmarks/ingest.py``
(``--messages 100000 --rate 1000 --seconds 10``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.evidence.log import read_records

ROOT = Path(__file__).resolve().parent.parent
EVENT = "kent-summer-fest-2027"
P = f"kent/{EVENT}"
FLOOD_GATE = "north"
LATENCY_GATE = "south"


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()


def _payloads(gate: str, n: int) -> list[bytes]:
    """n cumulative counts for one gate, seq 1..n, one person in per message."""
    ts = _now_iso()
    return [
        json.dumps({"seq": i, "ts": ts, "in_total": i, "out_total": 0}).encode()
        for i in range(1, n + 1)
    ]


def flood(broker: MosquittoBroker, topic: str, payloads: list[bytes]) -> float:
    """Publish at QoS 1 as fast as possible; return the seconds it took."""
    # paho, waiting for every PUBACK: mosquitto_pub -l was measured to exit at end of
    # input with messages still unsent, which would count as "lost" here.
    start = time.perf_counter()
    client = make_client(parse_broker_url(broker.url))
    # Unlimited in flight: with a cap, paho rescans its whole queue on every PUBACK.
    client.max_inflight_messages_set(0)
    client.connect(broker.host, broker.port)
    client.loop_start()
    infos: list[mqtt.MQTTMessageInfo] = []
    for i, payload in enumerate(payloads):
        if i >= 20_000:  # packet ids wrap at 65,535: keep fewer than that outstanding
            infos[i - 20_000].wait_for_publish(timeout=600)
        infos.append(client.publish(topic, payload, qos=1))
    for info in infos[-20_000:]:
        info.wait_for_publish(timeout=600)
    client.disconnect()
    client.loop_stop()
    return time.perf_counter() - start


# -- (a) the bare subscriber, in its own process like the aggregator -------------------------


def bare_subscriber(url: str, expected: int, subscribe_only: bool, timeout: float) -> None:
    """Count messages on the flood topic; print JSON {received, seconds} and exit."""
    address = parse_broker_url(url)
    client = make_client(address, "bench-bare-subscriber", clean_start=False)
    state: dict[str, Any] = {"n": 0, "first": None, "last": None}
    done = threading.Event()
    subscribed = threading.Event()

    def on_connect(c: mqtt.Client, *args: object) -> None:
        c.subscribe(f"{P}/gate/{FLOOD_GATE}/count", qos=1)

    def on_subscribe(*args: object) -> None:
        subscribed.set()

    def on_message(c: mqtt.Client, u: object, m: mqtt.MQTTMessage) -> None:
        now = time.perf_counter()
        if state["first"] is None:
            state["first"] = now
        state["n"] += 1
        state["last"] = now
        if state["n"] >= expected:
            done.set()

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.connect(address.host, address.port)
    client.loop_start()
    if subscribe_only:
        subscribed.wait(timeout)
    else:
        deadline = time.monotonic() + timeout
        while not done.wait(0.5):
            if time.monotonic() > deadline:
                break
        time.sleep(1.0)  # anything beyond `expected` would be a duplicate; count it too
    client.disconnect()
    client.loop_stop()
    seconds = (state["last"] - state["first"]) if state["first"] is not None else 0.0
    print(json.dumps({"received": state["n"], "seconds": seconds}))


def run_bare(broker: MosquittoBroker, payloads: list[bytes], timeout: float) -> dict[str, Any]:
    me = [sys.executable, __file__, "--bare-subscriber", broker.url, str(len(payloads))]
    subprocess.run([*me, "--subscribe-only"], check=True, timeout=30, capture_output=True)
    flood(broker, f"{P}/gate/{FLOOD_GATE}/count", payloads)
    out = subprocess.run(me, check=True, timeout=timeout + 30, capture_output=True, text=True)
    result = json.loads(out.stdout)
    result["rate"] = result["received"] / result["seconds"] if result["seconds"] else 0.0
    return result


# -- (b) kent-ops run -------------------------------------------------------------------------


class StatusWatch:
    """Subscribes to the retained status; remembers when each count was first shown."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.seen: list[tuple[float, int, int]] = []  # (perf_counter, north in, south in)
        self.online = threading.Event()
        self._cond = threading.Condition()
        self.client = make_client(parse_broker_url(broker.url))
        self.client.on_connect = lambda c, *a: c.subscribe(
            [(f"{P}/status", 1), (f"{P}/aggregator/availability", 1)]
        )
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def _on_message(self, c: mqtt.Client, u: object, m: mqtt.MQTTMessage) -> None:
        now = time.perf_counter()
        if m.topic.endswith("availability"):
            if m.payload == b"online":
                self.online.set()
            else:
                self.online.clear()
            return
        gates = json.loads(m.payload).get("gates", {})
        north = gates.get(FLOOD_GATE, {}).get("in", 0)
        south = gates.get(LATENCY_GATE, {}).get("in", 0)
        with self._cond:
            self.seen.append((now, north, south))
            self._cond.notify_all()

    def wait(self, pred: Any, timeout: float) -> tuple[float, int, int] | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if self.seen and pred(self.seen[-1]):
                    return self.seen[-1]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def start_aggregator(broker: MosquittoBroker, evidence: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kent_ops",
            "run",
            "--permit",
            str(ROOT / "examples" / "permit.toml"),
            "--evidence",
            str(evidence),
            "--broker",
            broker.url,
            "--log-level",
            "warning",
        ],  # fmt: skip
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )


def stop_aggregator(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def run_kent_ops(
    broker: MosquittoBroker,
    payloads: list[bytes],
    workdir: Path,
    watch: StatusWatch,
    timeout: float,
) -> tuple[dict[str, Any], subprocess.Popen]:
    evidence = workdir / "evidence.sqlite"
    log = workdir / "aggregator.log"
    proc = start_aggregator(broker, evidence, log)  # creates the persistent session
    if not watch.online.wait(30):
        raise RuntimeError(f"kent-ops run did not come online; see {log}")
    stop_aggregator(proc)
    flood(broker, f"{P}/gate/{FLOOD_GATE}/count", payloads)
    proc = start_aggregator(broker, evidence, log)
    n = len(payloads)
    shown = watch.wait(lambda s: s[1] >= n, timeout)
    end_wall = datetime.now(UTC)
    messages = [r for r in read_records(evidence) if r.kind == "message"]
    flood_msgs = [r for r in messages if r.topic and r.topic.endswith(f"/{FLOOD_GATE}/count")]
    distinct = {r.payload for r in flood_msgs}
    if shown is None or not flood_msgs:
        return {"received": len(distinct), "seconds": 0.0, "rate": 0.0, "complete": False}, proc
    seconds = (end_wall - flood_msgs[0].received_at).total_seconds()
    return {
        "received": len(distinct),
        "records": len(flood_msgs),
        "seconds": seconds,
        "rate": n / seconds,
        "complete": True,
    }, proc


def measure_latency(
    broker: MosquittoBroker, watch: StatusWatch, rate: float, seconds: float
) -> dict[str, Any]:
    """Publish one gate at a steady rate; time each message until a status includes it."""
    n = int(rate * seconds)
    client = make_client(parse_broker_url(broker.url))
    client.max_inflight_messages_set(1000)
    client.connect(broker.host, broker.port)
    client.loop_start()
    sent_at: list[float] = []
    topic = f"{P}/gate/{LATENCY_GATE}/count"
    start = time.perf_counter()
    for i in range(1, n + 1):
        target = start + (i - 1) / rate
        delay = target - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        payload = json.dumps({"seq": i, "ts": _now_iso(), "in_total": i, "out_total": 0})
        sent_at.append(time.perf_counter())
        client.publish(topic, payload.encode(), qos=1)
    achieved = n / (time.perf_counter() - start)
    watch.wait(lambda s: s[2] >= n, 30)
    client.disconnect()
    client.loop_stop()
    latencies: list[float] = []
    shown = [(t, south) for t, _, south in watch.seen if t >= start]
    j = 0
    for i, t_pub in enumerate(sent_at, start=1):
        while j < len(shown) and shown[j][1] < i:
            j += 1
        if j == len(shown):
            break
        latencies.append(shown[j][0] - t_pub)
    lat = sorted(latencies)
    return {
        "messages": n,
        "rate": achieved,
        "reflected": len(lat),
        "p50_ms": 1000 * statistics.median(lat) if lat else float("nan"),
        "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan"),
        "max_ms": 1000 * lat[-1] if lat else float("nan"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000, help="flood size")
    parser.add_argument("--rate", type=float, default=1000.0, help="steady rate for latency")
    parser.add_argument("--seconds", type=float, default=10.0, help="steady phase length")
    parser.add_argument("--timeout", type=float, default=180.0, help="per drain, at most")
    parser.add_argument("--bare-subscriber", nargs=2, metavar=("URL", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--subscribe-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_subscriber:
        url, n = args.bare_subscriber
        bare_subscriber(url, int(n), args.subscribe_only, args.timeout)
        return 0

    with tempfile.TemporaryDirectory(prefix="kent-ingest-") as tmp:
        work = Path(tmp)
        with MosquittoBroker(work / "broker") as broker:
            print(
                f"broker {broker.url}, {args.messages:,} gate messages at QoS 1, "
                f"{os.cpu_count()} cpus"
            )
            payloads = _payloads(FLOOD_GATE, args.messages)
            bare = run_bare(broker, payloads, args.timeout)
            print(
                f"(a) bare paho subscriber: {bare['rate']:,.0f} msg/s "
                f"({bare['received']:,} in {bare['seconds']:.2f} s), "
                f"lost {args.messages - bare['received']:,}"
            )
            watch = StatusWatch(broker)
            proc = None
            try:
                ko, proc = run_kent_ops(broker, payloads, work, watch, args.timeout)
                lost = args.messages - ko["received"]
                print(
                    f"(b) kent-ops run + evidence log: {ko['rate']:,.0f} msg/s "
                    f"({ko['received']:,} in {ko['seconds']:.2f} s, first receive to status), "
                    f"lost {lost:,}"
                    + ("" if ko["complete"] else " (DID NOT FINISH within the timeout)")
                )
                ratio = ko["rate"] / bare["rate"] if bare["rate"] else 0.0
                print(f"ratio (b)/(a): {ratio:.2f}  (target >= 0.6)")
                lat = measure_latency(broker, watch, args.rate, args.seconds)
                print(
                    f"latency publish -> status at {lat['rate']:,.0f} msg/s "
                    f"({lat['reflected']:,}/{lat['messages']:,} reflected): "
                    f"p50 {lat['p50_ms']:.0f} ms, p99 {lat['p99_ms']:.0f} ms, "
                    f"max {lat['max_ms']:.0f} ms  (target p99 < 200 ms)"
                )
            finally:
                if proc is not None:
                    stop_aggregator(proc)
                watch.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
