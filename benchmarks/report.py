"""How fast ``kent-ops report`` turns a three-day, 50-gate festival's evidence log into a report.

The report's measurement. First it writes, into a temporary folder, the evidence log the
aggregator would have written for a three-day festival (50 gate counters, 8 lots, two
staff stations, overnight camping, a few breaches and a gate outage), at least 5,000,000
records: every message is fed to a real engine on the wall clock (so each record holds
the engine's verdict, and alert records appear where the live service would have written
them), status snapshots every 10 s, checkpoints every 60 s. Records go straight into
SQLite with ``executemany`` in large transactions, chained with
:func:`kent_ops.evidence.log.record_hash` (no MQTT: this measures the report, not the
broker). Then it times ``kent-ops report`` on the log as a subprocess and prints the
seconds, records per second and the child's peak memory.

Before it, it times the floor in this process: every row read, its SHA-256 chained and
its payload decoded, on one core; the report's wall time over the floor's is the ratio
printed (target 2 or less). Target: at least 100,000 records/s and under 2 GB. The rate
is wall-clock time on this machine, so other work on it slows it down; the CPU seconds
are printed beside it.

Run: ``python benchmarks/report.py`` (``--days 1`` for a quick look; ``--keep DIR``
keeps the log and the report, ``--keep DIR --reuse`` times the log kept there).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.permit import load_permit
from kent_ops.evidence.chain import ChainWalk
from kent_ops.evidence.log import EvidenceLog, format_time, json_bytes, record_hash
from kent_ops.evidence.records import connect_ro
from kent_ops.evidence.replay import last_record_id

ROOT = Path(__file__).resolve().parent.parent
EVENT = "kent-summer-fest-2027"
P = f"kent/{EVENT}"
GATES = 50
LOTS = 8
STATIONS = ("first-aid", "medical-tent")
DAY0 = datetime(2027, 7, 2, 12, 0, tzinfo=UTC)  # 08:00 in Kent on the first day
DAYS = 3
BATCH = 200_000


def festival_permit(path: Path) -> Path:
    """The example permit, grown to a three-day, 50-gate festival with camping."""
    text = (ROOT / "examples" / "permit.toml").read_text()
    head = text.split("[[windows]]")[0]
    middle = text.split("[limits]")[1].split("[[gates]]")[0]
    gates = "".join(f'[[gates]]\nid = "g{i:02d}"\n' for i in range(GATES))
    lots = "".join(f'[[lots]]\nid = "lot-{i}"\ncapacity = 1200\n' for i in range(LOTS))
    stations = "".join(f'[[staff_stations]]\nid = "{s}"\n' for s in STATIONS)
    text = (
        head
        + "[[windows]]\nstart = 2027-07-02T08:00:00-04:00\nend = 2027-07-05T08:00:00-04:00\n\n"
        + "[limits]"
        + middle
        + gates
        + lots
        + stations
        + "[alerting]\npending_s = 10\nclear_s = 30\nstale_after_s = 60\n"
        + "hold_at = 36000\nresume_below = 35640\n"
    )
    text = (
        text.replace("max_at_one_time = 4000", "max_at_one_time = 36000")
        .replace("max_collective = 9000", "max_collective = 250000")
        .replace("vehicles_at_one_time = 1100", "vehicles_at_one_time = 9000")
        .replace("security_guards = 20", "security_guards = 4")
        .replace("overnight = false", "overnight = true")
        .replace("housing_declared = false", "housing_declared = true")
    )
    path.write_text(text)
    return path


class Writer:
    """Appends chained records to the log in large ``executemany`` transactions."""

    def __init__(self, path: Path, count: int, head: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA synchronous=OFF")
        self.count = count
        self.head = head
        self.rows: list[tuple[object, ...]] = []

    def append(
        self,
        kind: str,
        at: str,
        topic: str | None,
        payload: bytes,
        accepted: int | None,
        reason: str | None,
    ) -> tuple[int, str]:
        rid = self.count + 1
        digest = record_hash(self.head, rid, kind, at, topic, payload, accepted, reason)
        self.rows.append((rid, kind, at, topic, payload, accepted, reason, digest))
        self.count = rid
        self.head = digest
        if len(self.rows) >= BATCH:
            self.flush()
        return rid, digest

    def flush(self) -> None:
        if not self.rows:
            return
        self.conn.execute("BEGIN")
        self.conn.executemany(
            "INSERT INTO records (id, kind, received_at, topic, payload, accepted, reason, hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            self.rows,
        )
        self.conn.execute("COMMIT")
        self.rows.clear()

    def close(self) -> None:
        self.flush()
        self.conn.close()


def crowd_target(sec: int) -> int:
    """Persons the festival draws ``sec`` seconds after the first day's 08:00 (Kent time).

    Days: campers only until 10:00, a ramp to 30,000 by 14:00, a full site until 22:00
    (on day 2, 37,000 from 17:00 to 17:30: over the permitted 36,000), then a ramp down
    to the 6,000 campers who stay the night (from the first evening on).
    """
    day, within = divmod(sec, 86400)
    hour = within / 3600 + 8  # local hour, 8 .. 32 (i.e. 08:00 to 08:00 next day)
    campers = 6000 if (day > 0 or hour >= 22) else 0
    if hour < 10:
        crowd = 0.0
    elif hour < 14:
        crowd = (hour - 10) / 4 * 30000
    elif hour < 22:
        crowd = 37000 if (day == 1 and 17 <= hour < 17.5) else 30000
    elif hour < 26:
        crowd = 30000 * (26 - hour) / 4
    else:
        crowd = 0.0
    return int(max(crowd, campers))


def _some(rng: random.Random, x: float) -> int:
    """``x`` rounded up or down at random, so small flows still move people."""
    whole = int(x)
    return whole + (1 if rng.random() < x - whole else 0)


OnSecond = Callable[[Engine, "Writer", datetime, int], None]
"""Called after the service's own records of each second: (engine, writer, time, second)."""


def generate(
    path: Path, permit_path: Path, days: int, progress: bool, on_second: OnSecond | None = None
) -> tuple[int, float]:
    """Write the festival's evidence log; return (records, seconds taken).

    ``on_second`` may add records of its own (benchmarks/restart.py adds engine snapshots).
    """
    t_start = time.perf_counter()
    permit = load_permit(permit_path)
    sha = hashlib.sha256(permit_path.read_bytes()).hexdigest()
    log = EvidenceLog.open(path, event_id=EVENT, permit_sha256=sha)
    count, head = log.head
    log.close()
    w = Writer(path, count, head)
    engine = Engine(permit, clock="wall")
    rng = random.Random(2027)
    start_at = format_time(DAY0 - timedelta(seconds=5))
    w.append(
        "system", start_at, None, json_bytes({"event": "started", "clock": "wall"}), None, None
    )

    gate_in = [0] * GATES
    gate_out = [0] * GATES
    gate_seq = [0] * GATES
    lot_seq = [0] * LOTS
    badge_seq = dict.fromkeys(STATIONS, 0)
    on_duty: dict[str, str] = {}
    # Day 3, 14:00: gate g17 falls silent for five minutes (a sensor-offline finding).
    silent_gate, silent_from, silent_to = 17, 2 * 86400 + 6 * 3600, 2 * 86400 + 6 * 3600 + 300
    total_seconds = days * 86400

    def feed(topic: str, body: bytes, received: datetime, at: str) -> None:
        # The live service also hands each record's hash to its engine, for the alerts
        # to cite; the comparison the report makes does not look at hashes, so the
        # generator does not keep millions of them in memory.
        r = engine.feed(topic, body, received, w.count + 1)
        w.append("message", at, topic, body, 1 if r.accepted else 0, r.reason)

    messages = 0
    sec = 0
    while sec < total_seconds:
        now = DAY0 + timedelta(seconds=sec)
        ts = now.isoformat().replace("+00:00", "Z")
        hour = (sec % 86400) / 3600 + 8
        busy = 8 <= hour < 26
        want = crowd_target(sec)
        current = sum(gate_in) - sum(gate_out)
        # Each gate reports every 2 s while the site is busy and heartbeats every 30 s at
        # night; each report closes a share of the gap to the crowd wanted, with a little
        # churn both ways.
        period = 2 if busy else 30
        share = (want - current) / GATES * period / 8
        for g in range(GATES):
            if (sec + g) % period:
                continue
            if g == silent_gate and silent_from <= sec < silent_to:
                continue
            gate_in[g] += _some(rng, max(share, 0) + 0.01)
            # Nobody leaves through a gate more persons than came in by it (a counter that
            # did would clamp attendance at 0 all morning: a faulty day, not a festival).
            leaving = _some(rng, max(-share, 0) + 0.01)
            gate_out[g] += min(leaving, gate_in[g] - gate_out[g])
            gate_seq[g] += 1
            body = (
                f'{{"seq":{gate_seq[g]},"ts":"{ts}","in_total":{gate_in[g]},'
                f'"out_total":{gate_out[g]}}}'
            ).encode()
            received = now + timedelta(milliseconds=20 + g)
            feed(f"{P}/gate/g{g:02d}/count", body, received, format_time(received))
            messages += 1
        if sec % 10 == 0:
            for lot in range(LOTS):
                lot_seq[lot] += 1
                # A car brings at least one person: never more cars than persons counted.
                cars = min(
                    1200, current // LOTS, max(0, current // 4 // LOTS + rng.randint(-20, 20))
                )
                body = f'{{"seq":{lot_seq[lot]},"ts":"{ts}","occupied":{cars}}}'.encode()
                received = now + timedelta(milliseconds=90 + lot)
                feed(f"{P}/parking/lot-{lot}/occupancy", body, received, format_time(received))
                messages += 1
        if sec % 300 == 0:
            # Staff follow the crowd: nurses for the attendance expected soon, a doctor
            # always, security; on day 3 the medical tent is short for ten minutes.
            expected = max(crowd_target(sec), crowd_target(sec + 600), current)
            need = -(-expected // 500) + 2
            if 2 * 86400 + 4 * 3600 <= sec < 2 * 86400 + 4 * 3600 + 600:
                need = max(0, need - 8)
            wanted = {f"RN-{i:03d}": "nurse" for i in range(need)}
            wanted |= {"DR-1": "doctor", "DR-2": "doctor"}
            wanted |= {f"SEC-{i}": "security" for i in range(6)}
            changes = [(b, r, "on") for b, r in wanted.items() if on_duty.get(b) != r]
            changes += [(b, r, "off") for b, r in on_duty.items() if b not in wanted]
            for i, (badge, role, action) in enumerate(changes):
                station = STATIONS[i % 2]
                badge_seq[station] += 1
                body = json.dumps(
                    {
                        "seq": badge_seq[station],
                        "ts": ts,
                        "badge": badge,
                        "role": role,
                        "action": action,
                    }
                ).encode()
                received = now + timedelta(milliseconds=150)
                feed(f"{P}/staff/{station}/badge", body, received, format_time(received))
                messages += 1
                if action == "on":
                    on_duty[badge] = role
                else:
                    on_duty.pop(badge, None)
        # The service's own records, as its timers write them: a tick, alert changes,
        # a status snapshot every 10 s, a checkpoint every 60 s.
        tick_at = now + timedelta(milliseconds=500)
        engine.tick(tick_at)
        at = format_time(tick_at)
        for alert in engine.collect_changes().alerts:
            w.append("alert", at, None, wire.encode(alert), None, None)
        if sec % 10 == 0:
            w.append("status", at, None, wire.encode(engine.status()), None, None)
        if sec % 60 == 0:
            point = {"record": w.count, "hash": w.head, "ts": tick_at.isoformat()}
            w.append("system", at, None, json_bytes({"event": "checkpoint", **point}), None, None)
        if on_second is not None:
            on_second(engine, w, tick_at, sec)
        sec += 1
        if sec % 3600 == 0 and progress:
            print(f"  generating: hour {sec // 3600} of {total_seconds // 3600}, "
                  f"{w.count:,} records", file=sys.stderr, flush=True)  # fmt: skip
    stop_at = format_time(DAY0 + timedelta(seconds=sec))
    w.append("system", stop_at, None, json_bytes({"event": "stopped"}), None, None)
    w.close()
    return w.count, time.perf_counter() - t_start


def floor(log: Path) -> tuple[float, float]:
    """What no report can skip, timed in this process: every row read, its SHA-256 chained
    (the evidence module's own chain walk) and its payload decoded with msgspec. Returns
    (wall seconds, CPU seconds)."""
    decode = msgspec.json.decode
    w0, c0 = time.perf_counter(), time.process_time()
    conn = connect_ro(log)
    try:
        for batch in ChainWalk(conn).batches():
            for row in batch:
                payload = row[4]
                if payload[:1] in (b"{", b"["):
                    try:  # noqa: SIM105 - suppress() would cost more than the decode it times
                        decode(payload)
                    except msgspec.DecodeError:
                        pass  # a rejected message's bytes: decoding them is still the work
    finally:
        conn.close()
    return time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=DAYS, help="festival days (default 3)")
    parser.add_argument("--quiet", action="store_true", help="no generation progress")
    parser.add_argument("--keep", metavar="DIR", help="keep the log and the report here")
    parser.add_argument(
        "--reuse", action="store_true", help="with --keep: time the log already there"
    )
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kent-report-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        permit_path = festival_permit(work / "festival.toml")
        log = work / "festival.sqlite"
        if args.reuse and log.exists():
            records = last_record_id(log)
            print(f"evidence log         {records:,} records, reused from {log}")
        else:
            log.unlink(missing_ok=True)
            records, gen_s = generate(log, permit_path, args.days, not args.quiet)
            size_mb = log.stat().st_size / 1e6
            print(
                f"evidence log         {records:,} records, {size_mb:,.0f} MB, "
                f"written in {gen_s:.1f} s"
            )
        floor_s, floor_cpu = floor(log)
        print(
            f"floor                {floor_s:.1f} s wall, {floor_cpu:.1f} s CPU on one core: "
            "the rows read, their SHA-256 chained, their payloads decoded (msgspec)"
        )
        out = work / "report"
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "kent_ops", "report", "--permit", str(permit_path),
             "--evidence", str(log), "--out", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_kb = usage.ru_maxrss
        cpu = usage.ru_utime + usage.ru_stime
        if proc.returncode not in (0, 1):
            print(proc.stdout + proc.stderr, file=sys.stderr)
            raise SystemExit(f"kent-ops report failed with exit code {proc.returncode}")
        rate = records / seconds
        peak_gb = peak_kb / 1024 / 1024
        print(
            f"kent-ops report      {seconds:.1f} s wall (exit {proc.returncode}); "
            f"{cpu:.1f} s CPU with its verifier process on the second core"
        )
        ratio = seconds / floor_s
        print(f"report / floor       {ratio:.2f} (target 2.0 or less: "
              f"{'met' if ratio <= 2 else 'NOT met'})")  # fmt: skip
        print(f"rate                 {rate:,.0f} records/s (target 100,000: "
              f"{'met' if rate >= 100_000 else 'NOT met'})")  # fmt: skip
        print(f"peak memory          {peak_gb:.2f} GB (target < 2 GB: "
              f"{'met' if peak_gb < 2 else 'NOT met'})")  # fmt: skip
        for line in (proc.stdout + proc.stderr).strip().splitlines():
            print(f"  | {line}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
