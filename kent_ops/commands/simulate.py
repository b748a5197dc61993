"""``kent-ops simulate``: run a scenario's simulated sensors against a broker.

The scenario, the devices and the publishing live in :mod:`sensors`; this is the
command's glue: arguments, signals, and one summary line.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from datetime import UTC, datetime
from types import FrameType

from kent_ops.broker.credentials import broker_from_args
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from sensors.scenario import ScenarioError, load_scenario
from sensors.simulator import run_simulation

__all__ = ["cli_simulate", "parse_start"]


def parse_start(text: str, permit: Permit) -> datetime:
    """``now``, or an ISO 8601 time; without an offset it is in the event's time zone."""
    if text == "now":
        return datetime.now(UTC)
    try:
        start = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--start {text!r} is not an ISO 8601 time such as 2027-07-04T10:00:00-04:00"
        ) from None
    if start.tzinfo is None:
        start = start.replace(tzinfo=permit.timezone)
    return start


def cli_simulate(args: argparse.Namespace) -> int:
    """Run the scenario until done or interrupted; print what was published."""
    permit = load_permit(args.permit)
    address = broker_from_args(args)
    start = parse_start(args.start, permit) if args.start else None
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
    stop = threading.Event()
    reached: list[datetime] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    wall0 = time.monotonic()
    try:
        published = run_simulation(
            permit,
            scenario,
            address,
            speed=args.speed,
            seed=args.seed,
            start=start,
            duration=_simulated_seconds(args),
            stop=stop,
            ca_file=args.ca_file,
            on_progress=lambda count, at: reached.__setitem__(slice(None), [at]),
        )
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    wall = time.monotonic() - wall0
    upto = ""
    if reached:
        upto = f", simulated up to {reached[0].astimezone(permit.timezone).isoformat()}"
    verb = "stopped" if stop.is_set() else "done"
    print(
        f"{verb}: scenario {scenario.name} (seed {args.seed}): {published:,} messages "
        f"published to {address.url} in {wall:.1f} s{upto}",
        flush=True,
    )
    return 0


def _simulated_seconds(args: argparse.Namespace) -> float | None:
    """How long to run, in simulated seconds: --duration is real seconds (times the
    speed), --simulated-duration simulated ones; the shorter wins when both are given."""
    limits = []
    if args.duration is not None:
        limits.append(args.duration * args.speed)
    if getattr(args, "simulated_duration", None) is not None:
        limits.append(args.simulated_duration)
    return min(limits) if limits else None
