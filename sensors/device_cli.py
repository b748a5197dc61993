"""The command line every device shares: ``python -m sensors.<device> --permit P --id ID``.

A device reads one event per line from stdin (a GPIO script, a serial reader or a person
can feed it), publishes while it runs, heartbeats in the background, and on end of input,
Ctrl-C or SIGTERM says ``offline`` and exits 0. At the end of input it first waits up to
10 s for a broker it has not reached yet, so the last totals are delivered; if none
answers it exits 1 (the state file, if any, still holds the counts). A bad line
is reported on stderr and skipped: a counter must not stop counting for one garbled line.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any, NoReturn

from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.credentials import add_broker_arguments, broker_from_args
from kent_ops.core.errors import KentOpsError
from kent_ops.core.permit import PermitError, load_permit
from kent_ops.core.sensor_kinds import SensorKind
from kent_ops.core.wire import load_keys
from sensors.device import Device

__all__ = ["DeviceSpec", "run_device_cli"]

EXIT_OK = 0
EXIT_UNDELIVERED = 1
EXIT_USAGE = 2
FINAL_WAIT_S = 10.0
"""At the end of input, how long to wait for the broker so the last reading goes out."""


@dataclass(frozen=True, slots=True)
class DeviceSpec:
    """How one kind of device is built and fed from a line of input."""

    prog: str
    kind: str  # gate | lot | station, as in Permit.sensors
    description: str
    periodic: bool  # heartbeats (gate counters, lot sensors) or speaks only on events
    make: Callable[..., Device]
    handle: Callable[[Device, str], None]

    @classmethod
    def of(
        cls,
        kind: SensorKind,
        device: type[Device],
        handle: Callable[[Device, str], None],
        description: str,
    ) -> DeviceSpec:
        """The command line of the device that plays ``kind`` (core/sensor_kinds/table.py): its
        module (``python -m …``) and whether it heartbeats are the kind's."""
        module = kind.device.rpartition(".")[0]
        return cls(f"python -m {module}", kind.name, description, kind.heartbeats, device, handle)

    def main(self, argv: Sequence[str] | None = None) -> int:
        """The device's ``main``: see :func:`run_device_cli`."""
        return run_device_cli(self, argv)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _parser(spec: DeviceSpec) -> argparse.ArgumentParser:
    p = _Parser(prog=spec.prog, description=spec.description)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--permit", metavar="P", help="the permit file: gives the event id")
    who.add_argument("--event", metavar="ID", help="the event id, when no permit file is at hand")
    p.add_argument("--id", required=True, metavar="ID", help="this sensor's id in the permit")
    add_broker_arguments(p)
    p.add_argument("--state", metavar="FILE", help="keep seq (and totals) here across reboots")
    p.add_argument(
        "--keys",
        metavar="FILE",
        help="the event's signing keys file (TOML [keys]); default: the permit's [signing]",
    )
    if spec.periodic:
        p.add_argument(
            "--heartbeat",
            type=float,
            default=30.0,
            metavar="S",
            help="republish the current reading after S seconds of silence (default 30)",
        )
    return p


def run_device_cli(spec: DeviceSpec, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, connect the device, feed it stdin until the end, and close it."""
    args = _parser(spec).parse_args(argv)
    opened = _open(spec, args)
    if isinstance(opened, str):
        sys.stderr.write(f"{spec.prog}: {opened}\n")
        return EXIT_USAGE
    device, address = opened
    device.connect(address, ca_file=args.ca_file)
    signal.signal(signal.SIGTERM, _interrupt)
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(device, stop), name="heartbeat", daemon=True)
    beat.start()
    status = EXIT_OK
    try:
        _feed(spec, device)
        # End of input: give a broker that is still coming up the chance to hear the end.
        if not device.wait_online(FINAL_WAIT_S):
            sys.stderr.write(
                f"{spec.prog}: broker {address.url} not reachable; last reading not sent\n"
            )
            status = EXIT_UNDELIVERED
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        beat.join(timeout=5)
        device.close()
    return status


def _open(spec: DeviceSpec, args: argparse.Namespace) -> tuple[Device, BrokerAddress] | str:
    """The device the arguments describe and its broker, or why there is none."""
    event_id: str = args.event or ""
    tz: tzinfo | None = None
    keys_file: Path | None = None
    if args.permit:
        try:
            permit = load_permit(args.permit)
        except PermitError as exc:
            return str(exc)
        event_id, tz, keys_file = permit.event_id, permit.timezone, permit.signing_keys_file
        listed = permit.sensors.get(args.id)
        if listed != spec.kind:
            what = f"is a {listed}" if listed else "is not listed"
            return f"{args.id!r} {what} in {args.permit}, not a {spec.kind}."
    try:
        address = broker_from_args(args)
    except KentOpsError as exc:
        return f"{exc}."
    key = _key(args.id, Path(args.keys) if args.keys else keys_file)
    if isinstance(key, str):
        return key
    kwargs: dict[str, Any] = {"tz": tz, "key": key, "state_file": args.state}
    if spec.periodic:
        if args.heartbeat <= 0:
            return "--heartbeat must be more than 0 seconds."
        kwargs["heartbeat_s"] = args.heartbeat
    try:
        return spec.make(event_id, args.id, **kwargs), address
    except (ValueError, OSError) as exc:
        return f"{exc}."


def _key(sensor_id: str, keys_file: Path | None) -> bytes | str | None:
    """This sensor's signing key from the keys file (None: unsigned), or why not."""
    if keys_file is None:
        return None
    try:
        key = load_keys(keys_file).get(sensor_id)
    except ValueError as exc:
        return f"{exc}."
    if key is None:
        return f"{keys_file} holds no signing key for {sensor_id!r}."
    return key


def _feed(spec: DeviceSpec, device: Device) -> None:
    """One event per stdin line; a bad line is reported and skipped, never fatal."""
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            spec.handle(device, line)
        except ValueError as exc:
            sys.stderr.write(f"{spec.prog}: line {number} ignored: {exc}\n")


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM (a service stopping) ends the device like Ctrl-C: it says offline first."""
    raise KeyboardInterrupt


def _heartbeat(device: Device, stop: threading.Event) -> None:
    """Offer a heartbeat every second; the device sends one only when it is due."""
    while not stop.wait(1.0):
        device.tick()
