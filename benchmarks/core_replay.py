"""How fast the pure engine takes a festival day: records per second on one core.

Builds a synthetic day (50 gates reporting every second, lots every 10 s, badge scans)
as topic + raw payload bytes, so decoding is counted, then feeds it through one
Engine, ticking as the aggregator does. Prints records/s beside two baselines measured
in the same run: decoding alone with msgspec and with json.loads.

Run: python benchmarks/core_replay.py [--records 1000000]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

from kent_ops.core.engine import Engine
from kent_ops.core.permit import parse_permit
from kent_ops.core.wire import GateCount

ROOT = Path(__file__).resolve().parent.parent


def festival_permit(gates: int, lots: int) -> str:
    """The example permit with many gates and lots (a large festival)."""
    text = (ROOT / "examples" / "permit.toml").read_text()
    head = text.split("[[gates]]")[0]
    tail = text.split("[[staff_stations]]")[1]
    parts = [head]
    parts += [f'[[gates]]\nid = "g{i:02d}"\n' for i in range(gates)]
    parts += [f'[[lots]]\nid = "lot-{i:02d}"\ncapacity = 400\n' for i in range(lots)]
    parts.append("[[staff_stations]]" + tail)
    return (
        "\n".join(parts)
        .replace("max_at_one_time = 4000", "max_at_one_time = 40000")
        .replace("max_collective = 9000", "max_collective = 90000")
        .replace("hold_at = 4000", "hold_at = 40000")
        .replace("resume_below = 3960", "resume_below = 39600")
    )


def build_day(n_records: int, gates: int, lots: int) -> list[tuple[str, bytes, datetime]]:
    rng = random.Random(7)
    prefix = "kent/kent-summer-fest-2027"
    start = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
    totals = [[0, 0] for _ in range(gates)]
    seqs = [0] * gates
    lot_seq = [0] * lots
    badge_seq = 0
    out: list[tuple[str, bytes, datetime]] = []
    second = 0
    while len(out) < n_records:
        now = start + timedelta(seconds=second)
        ts = now.isoformat()
        for g in range(gates):
            # Arrivals outpace exits for the first hours, then the crowd turns over:
            # attendance climbs to about 30,000 and holds there, a realistic large day.
            inside = totals[g][0] - totals[g][1]
            totals[g][0] += rng.randint(0, 2)
            totals[g][1] += rng.randint(0, 2) if inside > 600 else 0
            seqs[g] += 1
            body = (
                f'{{"seq":{seqs[g]},"ts":"{ts}","in_total":{totals[g][0]},'
                f'"out_total":{totals[g][1]}}}'
            )
            out.append((f"{prefix}/gate/g{g:02d}/count", body.encode(), now))
        if second % 10 == 0:
            for lot in range(lots):
                lot_seq[lot] += 1
                body = f'{{"seq":{lot_seq[lot]},"ts":"{ts}","occupied":{rng.randint(0, 400)}}}'
                out.append((f"{prefix}/parking/lot-{lot:02d}/occupancy", body.encode(), now))
        if second % 30 == 0:
            badge_seq += 1
            role = rng.choice(["nurse", "doctor", "security"])
            action = rng.choice(["on", "on", "off"])
            body = json.dumps(
                {
                    "seq": badge_seq,
                    "ts": ts,
                    "badge": f"B-{rng.randint(1, 80)}",
                    "role": role,
                    "action": action,
                }
            )
            out.append((f"{prefix}/staff/first-aid/badge", body.encode(), now))
        second += 1
    return out[:n_records]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--gates", type=int, default=50)
    parser.add_argument("--lots", type=int, default=6)
    args = parser.parse_args()
    permit = parse_permit(festival_permit(args.gates, args.lots))
    day = build_day(args.records, args.gates, args.lots)
    gate_payloads = [p for t, p, _ in day if "/gate/" in t][:200_000]

    # Every rate is CPU time of this process (as the engine's): on a shared machine a
    # baseline timed on the wall clock would count the other processes' time as its own.
    decoder = msgspec.json.Decoder(GateCount)
    t0 = time.process_time()
    for p in gate_payloads:
        decoder.decode(p)
    msgspec_rate = len(gate_payloads) / (time.process_time() - t0)
    t0 = time.process_time()
    for p in gate_payloads:
        json.loads(p)
    json_rate = len(gate_payloads) / (time.process_time() - t0)

    engine = Engine(permit, clock="wall")
    one_second = timedelta(seconds=1)
    next_tick = day[0][2] + one_second
    t0 = time.process_time()
    w0 = time.perf_counter()
    for record_id, (topic, payload, at) in enumerate(day, start=1):
        engine.feed(topic, payload, at, record_id)
        if at >= next_tick:  # the aggregator ticks once a second
            engine.tick(at)
            engine.collect_changes()
            next_tick = at + one_second
    engine.status()
    cpu = time.process_time() - t0
    wall = time.perf_counter() - w0
    rate = len(day) / cpu
    print(
        f"records              {len(day):,} ({args.gates} gates at 1 Hz, {args.lots} lots, badges)"
    )
    print(
        f"engine               {rate:,.0f} records/s on one core "
        f"({cpu:.2f} s CPU, {wall:.2f} s wall)"
    )
    print(f"baseline msgspec     {msgspec_rate:,.0f} gate payloads/s (decode only)")
    print(f"baseline json.loads  {json_rate:,.0f} gate payloads/s (decode only)")
    print(f"engine / json.loads  {rate / json_rate:.2f}")
    print(f"target               180,000 records/s: {'met' if rate >= 180_000 else 'NOT met'}")
    status = engine.status()
    print(
        f"end state            attendance {status.attendance.current:,}, "
        f"alerts {len(engine.alerts)}, rejected {status.rejected}"
    )


if __name__ == "__main__":
    main()
