"""How much CPU the inspector dashboard spends per status update.

A status with 200 gates and 20 lots, every gate and lot changing, arrives 10 times a
second for a while; the dashboard runs headless at 120×40, with an hour of attendance
already on its trend line, and draws each one. The
figure printed is the process CPU time per update, less what the same app spends
idle over the same span (its clock and flash timers), so it is the cost of decoding
a status as the MQTT thread does, handing it to the app, and redrawing the panels.
Target: under 20 ms, so 10 updates a second leave most of a core free.

Run: ``python benchmarks/dashboard.py [--seconds 10] [--rate 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
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


async def measure(app: InspectorApp | Any, payloads: list[bytes], rate: float) -> dict[str, float]:
    """Feed ``payloads`` at ``rate`` a second; return CPU seconds busy and idle, per update."""
    topics = Topics(EVENT)
    interval = 1.0 / rate
    async with app.run_test(size=(120, 40), headless=True) as pilot:
        await pilot.pause(0.5)

        # Idle baseline: the same span with no updates (timers, clock).
        span = len(payloads) * interval
        cpu0 = time.process_time()
        await asyncio.sleep(span)
        idle = time.process_time() - cpu0

        cpu0 = time.process_time()
        wall0 = time.monotonic()
        slowest = 0.0
        for index, payload in enumerate(payloads):
            due = wall0 + index * interval
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            one = time.process_time()
            event = classify(topics, topics.status, payload, datetime.now(UTC))
            assert isinstance(event, StatusUpdate)
            app.post_message(StatusReceived(event.status, event.received_at))
            await pilot.pause()  # let it handle the message and redraw
            slowest = max(slowest, time.process_time() - one)
        await asyncio.sleep(max(0.0, wall0 + span - time.monotonic()))
        busy = time.process_time() - cpu0
        lag = time.monotonic() - wall0 - span
    updates = len(payloads)
    return {
        "per_update_ms": (busy - idle) / updates * 1000,
        "gross_per_update_ms": busy / updates * 1000,
        "idle_ms_per_s": idle / span * 1000,
        "slowest_ms": slowest * 1000,
        "lag_s": lag,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to feed updates")
    parser.add_argument("--rate", type=float, default=10.0, help="status updates a second")
    args = parser.parse_args()
    start = datetime.now(UTC)
    count = int(args.seconds * args.rate)
    statuses = [make_status(i, start + timedelta(seconds=i / args.rate)) for i in range(count)]
    payloads = [json.dumps(s).encode() for s in statuses]
    # An hour of attendance already on the trend line: the line bins 3,600 points.
    hour = [(start - timedelta(seconds=s), 50_000 - s) for s in range(3600, 0, -1)]
    print(
        f"status: {GATES} gates, {LOTS} lots, {len(payloads[0]):,} bytes; "
        f"{count} updates at {args.rate:g}/s, headless 120x40"
    )
    for name, factory in (
        ("inspector dashboard", lambda: make_inspector_app(EVENT, None, "bench", history=hour)),
        ("gate view", lambda: make_gate_app("gate-001", EVENT, None, state_dir="/tmp/kent-bench")),
    ):
        result = asyncio.run(measure(factory(), payloads, args.rate))
        verdict = "ok" if result["per_update_ms"] < TARGET_MS else "OVER TARGET"
        print(
            f"{name}: {result['per_update_ms']:.1f} ms CPU per update "
            f"(target < {TARGET_MS:.0f} ms: {verdict}); "
            f"gross {result['gross_per_update_ms']:.1f} ms, "
            f"idle {result['idle_ms_per_s']:.1f} ms/s, slowest {result['slowest_ms']:.1f} ms, "
            f"fell behind by {max(0.0, result['lag_s']):.2f} s"
        )


if __name__ == "__main__":
    main()
