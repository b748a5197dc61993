"""How much CPU the inspector dashboard and the gate view spend per status update.

A status with 200 gates and 20 lots, every gate and lot changing, arrives 10 times a
second for a while; each app runs headless at 120×40 (the inspector with an hour of
attendance already on its trend line). The figure printed is the process CPU time
per status, less what the same app spends idle over the same span (its clock and
flash timers), so it is the cost of decoding a status as the MQTT thread does,
handing it to the app, and redrawing the panels. Target: under 20 ms, so 10 updates
a second leave most of a core free.

The inspector is measured twice: drawing every status (the cost of one redraw), and
as it runs (at most four statuses drawn a second, ``FeedApp.STATUS_EVERY_S``).

CPU time on a shared machine moves with its load, so a figure is only comparable
with one taken at the same time: ``--baseline REV`` measures the apps of that git
revision too, in the same run, alternating with this tree's, ``--rounds`` times each,
and prints the median of each.

Run: ``python benchmarks/dashboard.py [--seconds 10] [--rate 10] [--baseline HEAD~3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any

from dashboards.common.feed import StatusUpdate, classify
from dashboards.common.messages import StatusReceived
from dashboards.gate.app import make_gate_app
from dashboards.inspector.app import InspectorApp, make_inspector_app
from kent_ops.core.wire import Topics

EVENT = "bench-fest"
GATES = 200
LOTS = 20
TARGET_MS = 20.0


def make_status(step: int, moment: datetime) -> dict[str, Any]:
    """A status in the wire's shape where every gate and lot moves at every step."""
    gates = {}
    total_in = total_out = 0
    for g in range(GATES):
        gin = 100 * g + 3 * step + g % 7
        gout = 40 * g + step
        total_in += gin
        total_out += gout
        gates[f"gate-{g:03d}"] = {
            "in": gin,
            "out": gout,
            "net": gin - gout,
            "per_minute": (g * 7 + step) % 60 / 2,
            "last_seen": (moment - timedelta(seconds=g % 9)).isoformat(),
            "online": (g + step) % 50 != 0,
            "manual": g % 40 == 0,
        }
    lots = {}
    for lot in range(LOTS):
        capacity = 300 + 10 * lot
        occupied = min(capacity, (lot * 31 + step) % capacity)
        lots[f"lot-{lot:02d}"] = {
            "capacity": capacity,
            "occupied": occupied,
            "free": capacity - occupied,
            "share": occupied / capacity,
            "online": True,
            "last_seen": moment.isoformat(),
        }
    current = total_in - total_out
    return {
        "ts": moment.isoformat(),
        "event": EVENT,
        "event_name": "Benchmark Festival",
        "timezone": "America/New_York",
        "permit": {"number": "MG-2027-999", "status": "issued"},
        "window": {"inside": True, "start": None, "end": None},
        "attendance": {
            "current": current,
            "entries": total_in,
            "exits": total_out,
            "peak": current,
            "max_at_one_time": current + 5000,
            "threshold": 500,
            "uncertain": step % 50 == 0,
        },
        "admit": True,
        "parking": {
            "spaces_provided": 20000,
            "spaces_required": current // 4,
            "occupied": sum(lot["occupied"] for lot in lots.values()),
            "vehicles_at_one_time": 9000,
        },
        "medical": {
            "doctors_on_duty": 3,
            "doctors_required": 1,
            "nurses_on_duty": current // 500 + 1,
            "nurses_required": current // 500 + 1,
        },
        "security": {"on_duty": 80, "declared": 80},
        "sensors": {},
        "gates": gates,
        "lots": lots,
        "active_alerts": [],
        "pending": [],
        "rejected": 0,
        "notes": [],
        "adjustments": [],
        "checklist": {},
    }


def _feed(app: Any, payloads: list[bytes], interval: float, posted: list[float]) -> None:
    """The MQTT thread's part, in a thread as there: decode each status on time and hand
    it to the app (``post_message`` is thread-safe, as the feed relies on)."""
    topics = Topics(EVENT)
    start = time.monotonic()
    for index, payload in enumerate(payloads):
        time.sleep(max(0.0, start + index * interval - time.monotonic()))
        event = classify(topics, topics.status, payload, datetime.now(UTC))
        assert isinstance(event, StatusUpdate)
        app.post_message(StatusReceived(event.status, event.received_at))
        posted.append(time.monotonic())


SETTLE_S = 0.5
"""Time after the last status in which its drawing (due within 0.25 s) is counted."""


async def measure(
    app: InspectorApp | Any, payloads: list[bytes], rate: float, size: tuple[int, int] = (120, 40)
) -> dict[str, float]:
    """Feed ``payloads`` at ``rate`` a second; return the CPU per status, busy less idle.

    CPU is the whole process's (``process_time``): the feeding thread's decoding is
    part of the cost, as the MQTT thread's is. Nothing else runs in the process.
    """
    interval = 1.0 / rate
    span = len(payloads) * interval
    last = json.loads(payloads[-1])["ts"]
    async with app.run_test(size=size, headless=True) as pilot:
        await pilot.pause(0.5)

        # Idle baseline: the same span with no updates (timers, clock).
        cpu0 = time.process_time()
        await asyncio.sleep(span + SETTLE_S)
        idle = time.process_time() - cpu0

        cpu0 = time.process_time()
        wall0 = time.monotonic()
        posted: list[float] = []
        await asyncio.to_thread(_feed, app, payloads, interval, posted)
        while app.status is None or app.status.ts.isoformat() != last:
            if time.monotonic() > posted[-1] + 30:
                raise RuntimeError("the app never showed the last status")
            await asyncio.sleep(0.002)
        behind = time.monotonic() - posted[-1]
        await asyncio.sleep(max(0.0, wall0 + span + SETTLE_S - time.monotonic()))
        busy = time.process_time() - cpu0
        late = time.monotonic() - wall0 - span - SETTLE_S
    updates = len(payloads)
    return {
        "per_update_ms": (busy - idle) / updates * 1000,
        "gross_per_update_ms": busy / updates * 1000,
        "idle_ms_per_s": idle / (span + SETTLE_S) * 1000,
        "behind_s": behind,
        "late_s": late,
    }


KINDS = {
    "inspector-each": "inspector, every status drawn",
    "inspector": "inspector as it runs (draws <= 4/s)",
    "gate": "gate view",
}


def measure_kind(
    kind: str, seconds: float, rate: float, size: tuple[int, int] = (120, 40)
) -> dict[str, float]:
    """Run one app on the statuses of this benchmark and return its figures."""
    start = datetime.now(UTC)
    count = int(seconds * rate)
    statuses = [make_status(i, start + timedelta(seconds=i / rate)) for i in range(count)]
    payloads = [json.dumps(s).encode() for s in statuses]
    # An hour of attendance already on the trend line: the line bins 3,600 points.
    hour = [(start - timedelta(seconds=s), 50_000 - s) for s in range(3600, 0, -1)]
    with tempfile.TemporaryDirectory(prefix="kent-bench-tally-") as state_dir:
        if kind == "gate":
            app: Any = make_gate_app("gate-001", EVENT, None, state_dir=state_dir)
        else:
            app = make_inspector_app(EVENT, None, "bench", history=hour)
            if kind == "inspector-each":
                app.STATUS_EVERY_S = 0.0  # an attribute a baseline without it ignores
        return asyncio.run(measure(app, payloads, rate, size))


def _tree(revision: str, into: Path) -> Path:
    """The files of ``revision`` of this repository, written under ``into``."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", revision],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _run_worker(kind: str, args: argparse.Namespace, tree: Path | None) -> dict[str, float]:
    """One measurement in a fresh process, of this tree's apps or of ``tree``'s."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    command = [sys.executable, __file__, "--worker", kind]
    command += ["--seconds", str(args.seconds), "--rate", str(args.rate)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _line(name: str, results: list[dict[str, float]], baseline: list[dict[str, float]]) -> str:
    per = statistics.median(r["per_update_ms"] for r in results)
    verdict = "ok" if per < TARGET_MS else "OVER TARGET"
    text = f"{name}: {per:.1f} ms CPU per status (target < {TARGET_MS:.0f} ms: {verdict})"
    if baseline:
        before = statistics.median(r["per_update_ms"] for r in baseline)
        text += f"; baseline {before:.1f} ms ({per / before:.0%} of it)"
    behind = max(r["behind_s"] for r in results)
    return f"{text}; the last status drawn {behind * 1000:.0f} ms after it came (worst run)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to feed updates")
    parser.add_argument("--rate", type=float, default=10.0, help="status updates a second")
    parser.add_argument("--baseline", help="a git revision to measure in the same run")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each, alternating")
    parser.add_argument("--worker", choices=sorted(KINDS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure_kind(args.worker, args.seconds, args.rate)))
        return
    count = int(args.seconds * args.rate)
    size = len(json.dumps(make_status(0, datetime.now(UTC))))
    print(
        f"status: {GATES} gates, {LOTS} lots, {size:,} bytes; {count} updates at "
        f"{args.rate:g}/s, headless 120x40; {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}; median of {args.rounds} runs"
        + (f", alternating with {args.baseline}" if args.baseline else "")
    )
    with tempfile.TemporaryDirectory(prefix="kent-dashboard-bench-") as folder:
        tree = _tree(args.baseline, Path(folder)) if args.baseline else None
        ours: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
        theirs: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
        for _ in range(args.rounds):
            for kind in KINDS:
                if tree is not None and kind != "inspector":  # a baseline draws every status
                    theirs[kind].append(_run_worker(kind, args, tree))
                ours[kind].append(_run_worker(kind, args, None))
    for kind, name in KINDS.items():
        print(_line(name, ours[kind], theirs[kind]))
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
