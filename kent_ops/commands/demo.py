"""``kent-ops demo``: the whole system on one machine, in one command.

A broker (a ``mosquitto`` on the PATH, else an embedded pure-Python one, or the one
``--broker`` names), the aggregator writing an evidence log in a temporary folder, a
simulated festival day at ``--speed`` times real time, and the inspector dashboard in
front. ``--headless`` replaces the dashboard by a status line and ends with a summary,
for scripts and tests. While it runs it shows its broker and the commands that attach a
deputy's gate view or another dashboard to it; on exit it says where the evidence is
and how to verify and report on it. Every command it prints runs as printed in a fresh
shell: kent-ops is named by its absolute path (the one beside the running interpreter,
usually in a ``.venv`` nobody activated).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import shlex
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
import paho.mqtt.client as mqtt

from kent_ops.broker.acl import deputy_gates, tally_gates
from kent_ops.broker.client import BrokerAddress, make_client, parse_broker_url
from kent_ops.broker.credentials import broker_from_args
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.core import wire
from kent_ops.core.display import local_clock
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.rules import shown_message
from kent_ops.core.wire import Topics

__all__ = ["EmbeddedBroker", "attach_commands", "cli_demo", "kent_ops_command"]

log = logging.getLogger("kent_ops.commands.demo")
EXAMPLE_PERMIT = Path(__file__).resolve().parents[2] / "examples" / "permit.toml"
LORAWAN_PERMIT = EXAMPLE_PERMIT.with_name("permit-lorawan.toml")


class EmbeddedBroker:
    """amqtt in a thread of its own: a broker for machines without Mosquitto.

    It carries about 9,000 messages/s here: plenty for a demo, not for the field.
    """

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="embedded-broker", daemon=True)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, timeout: float = 15.0) -> EmbeddedBroker:
        self._thread.start()
        if not self._ready.wait(timeout) or self._error is not None:
            raise UsageError(f"the embedded broker did not start: {self._error or 'timed out'}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        from amqtt.broker import Broker

        async def serve() -> None:
            config = {
                "listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{self.port}"}},
                "plugins": {
                    "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
                },
            }
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            broker = Broker(config)
            await broker.start()
            self._ready.set()
            await self._stop.wait()
            await broker.shutdown()

        for name in ("amqtt", "transitions", "passlib"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            asyncio.run(serve())
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._error = exc
            self._ready.set()


class StatusWatcher:
    """A plain paho subscriber to status and alerts: the headless demo's eyes."""

    def __init__(self, address: BrokerAddress, topics: Topics, ca_file: str | None) -> None:
        self.status: wire.Status | None = None
        self.alerts: dict[str, wire.Alert] = {}
        self._topics = topics
        self._client = make_client(address, ca_file=ca_file)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message
        self._client.connect_async(address.host, address.port)
        self._client.loop_start()

    def _on_connect(self, client: mqtt.Client, *args: object) -> None:
        client.subscribe([(self._topics.status, 1), (self._topics.alerts_wildcard, 1)])

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        ref = self._topics.parse(msg.topic)
        try:
            if isinstance(ref, wire.TopicRef) and ref.kind == "status":
                self.status = wire.decode_json(wire.Status, msg.payload)
            elif isinstance(ref, wire.TopicRef) and ref.kind == "alert" and msg.payload:
                alert = wire.decode_json(wire.Alert, msg.payload)
                self.alerts[alert.id] = alert
        except msgspec.DecodeError:
            return

    def close(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()


@contextlib.contextmanager
def _broker(args: argparse.Namespace, workdir: Path) -> Iterator[tuple[BrokerAddress, str]]:
    """The broker the demo talks to, and a sentence saying which one it is."""
    if args.broker:
        address = broker_from_args(args)
        yield address, f"broker {address.url}"
        return
    if shutil.which("mosquitto"):
        broker = MosquittoBroker(workdir / "mosquitto").start()
        try:
            yield parse_broker_url(broker.url), f"Mosquitto on {broker.url}"
        finally:
            broker.stop()
        return
    embedded = EmbeddedBroker().start()
    try:
        yield parse_broker_url(embedded.url), f"embedded broker (amqtt) on {embedded.url}"
    finally:
        embedded.stop()


def _permit(path: str | None, lorawan: bool = False) -> Permit:
    permit = load_permit(Path(path) if path else LORAWAN_PERMIT if lorawan else EXAMPLE_PERMIT)
    if lorawan and not permit.sources:
        raise UsageError(f"--lorawan: {permit.source_path} has no gate or lot with a source")
    return permit


def _status_line(status: wire.Status | None, permit: Permit) -> str:
    if not status:
        return "waiting for the aggregator's first status…"
    att, medical = status.attendance, status.medical
    local = status.ts.astimezone(permit.timezone).strftime("%H:%M") if status.ts else "--:--"
    flag = " (uncertain)" if att.uncertain else ""
    return (
        f"{local}  attendance {att.current:,}/{att.max_at_one_time:,}{flag}  "
        f"{'ADMIT' if status.admit else 'HOLD '}  "
        f"nurses {medical.nurses_on_duty}/{medical.nurses_required}  "
        f"active alerts {len(status.active_alerts)}  rejected {status.rejected}"
    )


def kent_ops_command() -> str:
    """How to run kent-ops from a fresh shell: the script beside this interpreter (the
    virtual environment's ``bin``), by its absolute path; else the interpreter itself."""
    script = Path(sys.executable).parent / "kent-ops"
    if script.is_file():
        return shlex.quote(str(script.absolute()))
    return f"{shlex.quote(sys.executable)} -m kent_ops"


def attach_commands(permit: Permit, address: BrokerAddress, ca_file: str | None) -> list[str]:
    """The commands that attach a deputy's gate view and another inspector dashboard."""
    gates = tally_gates(permit) or deputy_gates(permit) or list(permit.gates)
    connect = f"--event {permit.event_id} --broker {shlex.quote(address.url)}"
    if ca_file:
        connect += f" --ca-file {shlex.quote(str(Path(ca_file).absolute()))}"
    if address.username:
        connect += " --password-file FILE"
    kent_ops = kent_ops_command()
    return [
        f"{kent_ops} gate {gates[0]} {connect}",
        f"{kent_ops} dashboard {connect}",
    ]


def _attach_lines(permit: Permit, address: BrokerAddress, ca_file: str | None) -> list[str]:
    """The demo's notice: its broker, how to quit, and the commands that attach to it."""
    commands = attach_commands(permit, address, ca_file)
    return [
        f"Demo: broker {address.url} · q quits · ? shows how to attach",
        *(f"  {command}" for command in commands),
    ]


def cli_demo(args: argparse.Namespace) -> int:
    """Run broker, aggregator, simulator and dashboard until the user quits or time is up."""
    from kent_ops.service.aggregator import Aggregator

    lorawan = bool(getattr(args, "lorawan", False))
    permit = _permit(getattr(args, "permit", None), lorawan)
    workdir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="kent-ops-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    evidence = workdir / "evidence.sqlite"
    handler = logging.FileHandler(workdir / "demo.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    stop = threading.Event()
    sim_result: dict[str, Any] = {}
    screens: dict[str, Any] = {}
    """The demo's own dashboard once it runs: told when the simulated day is over."""
    topics = Topics(permit.event_id)

    with _broker(args, workdir) as (address, broker_text):
        # The demo's log is a scratch one: on a broker that keeps the checkpoint of an
        # earlier run it starts anew (recorded, and never publishing a lower checkpoint).
        aggregator = Aggregator(
            permit, evidence, address, clock="sensor", ca_file=args.ca_file, accept_rollback=True
        )
        aggregator.start()
        if not aggregator.connected.wait(15):
            aggregator.stop()
            aggregator.wait(10)
            raise UsageError(f"the aggregator could not connect to {address.url}")
        adapter = _start_adapter(permit, address, args.ca_file, workdir) if lorawan else None

        simulator = _start_simulator(args, permit, address, stop, sim_result, screens)
        watcher = StatusWatcher(address, topics, args.ca_file)
        notice = _attach_lines(permit, address, args.ca_file)
        print(
            f"kent-ops demo: {permit.event_name}, scenario {args.scenario} at {args.speed:g}x, "
            f"{broker_text}\nAttach from another terminal:\n" + "\n".join(notice[1:]),
            flush=True,
        )
        try:
            if args.headless:
                _run_headless(args, permit, watcher, sim_result, stop)
            else:
                _run_dashboard(permit, address, args.ca_file, notice, screens)
        finally:
            stop.set()
            simulator.join(15)
            time.sleep(0.5)
            if adapter is not None:
                adapter.stop()
                adapter.wait(15)
            aggregator.stop()
            aggregator.wait(30)
            watcher.close()
    if "error" in sim_result:
        sys.stderr.write(f"kent-ops: the simulator stopped: {sim_result['error']}\n")
    _print_summary(permit, watcher, sim_result, evidence, broker_text, args)
    return 0


def _start_simulator(
    args: argparse.Namespace,
    permit: Permit,
    address: BrokerAddress,
    stop: threading.Event,
    sim_result: dict[str, Any],
    screens: dict[str, Any],
) -> threading.Thread:
    """The scenario in a thread; at the end of its day it tells the demo's dashboard (or
    prints, headless) that the day is over, so the end does not look like an outage."""
    from sensors.simulator import run_simulation

    lorawan = bool(getattr(args, "lorawan", False))

    def simulate() -> None:
        try:
            sim_result["published"] = run_simulation(
                permit,
                args.scenario,
                address,
                speed=args.speed,
                seed=args.seed,
                stop=stop,
                ca_file=args.ca_file,
                on_progress=lambda _published, sim_now: sim_result.update(sim_now=sim_now),
                rewrite=_lorawan_rewrite(permit) if lorawan else None,
            )
        except Exception as exc:  # noqa: BLE001 - shown to the user below
            sim_result["error"] = str(exc)
        finally:
            sim_result["done"] = time.monotonic()
        if not stop.is_set():
            line = day_over_line(permit, sim_result.get("sim_now"), headless=args.headless)
            _announce(screens.get("app"), line)

    simulator = threading.Thread(target=simulate, name="simulator", daemon=True)
    simulator.start()
    return simulator


def _start_adapter(
    permit: Permit, address: BrokerAddress, ca_file: str | None, workdir: Path
) -> Any:
    """``kent-ops adapt`` in threads: the simulated network servers publish on the demo's
    own broker, so it is both the devices' broker and the event's."""
    from kent_ops.adapter.service import Adapter
    from kent_ops.adapter.state import StateFile

    state = StateFile(workdir / "adapt-state", permit.event_id).load()
    adapter = Adapter(permit, address, address, state, event_ca=ca_file, source_ca=ca_file)
    adapter.start()
    if not (adapter.connected.wait(15) and adapter.subscribed.wait(15)):
        adapter.stop()
        adapter.wait(10)
        raise UsageError(f"the adapter could not connect to {address.url}")
    return adapter


def _lorawan_rewrite(permit: Permit) -> Any:
    from sensors.lorawan import as_lorawan

    return lambda messages: as_lorawan(permit, messages)


def _run_headless(
    args: argparse.Namespace,
    permit: Permit,
    watcher: StatusWatcher,
    sim_result: dict[str, Any],
    stop: threading.Event,
) -> None:
    print("Ctrl+C stops the demo.", flush=True)
    deadline = time.monotonic() + args.duration if args.duration else None
    try:
        while not stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
            if "done" in sim_result and time.monotonic() - sim_result["done"] > 2:
                break
            print(_status_line(watcher.status, permit), flush=True)
            stop.wait(2.0)
    except KeyboardInterrupt:
        pass


def _run_dashboard(
    permit: Permit,
    address: BrokerAddress,
    ca_file: str | None,
    notice: list[str],
    screens: dict[str, Any],
) -> None:
    """The inspector's dashboard, on the demo's clock: it shows the time the aggregator
    keeps (its status says ``"clock": "sensor"``), as an attached gate view does."""
    from dashboards.inspector.app import make_inspector_app

    app = make_inspector_app(
        permit.event_id, address, "demo-inspector", ca_file=ca_file, notice=notice
    )
    screens["app"] = app
    app.run()


def day_over_line(permit: Permit, sim_now: datetime | None, *, headless: bool = False) -> str:
    """What the demo says when its simulated day has run out: an end, not an outage."""
    at = (
        f" ({local_clock(sim_now, permit.timezone, with_zone=True, seconds=False)})"
        if sim_now is not None
        else ""
    )
    then = "its summary follows" if headless else "q ends the demo with its summary"
    return f"The simulated day is over{at}; {then}."


def _announce(app: Any, line: str) -> None:
    """Put ``line`` on the demo's dashboard (from the simulator's thread), or print it."""
    if app is None:
        print(line, flush=True)
        return
    with contextlib.suppress(RuntimeError):  # the dashboard has already closed
        app.call_from_thread(app.announce, line)


def _print_summary(
    permit: Permit,
    watcher: StatusWatcher,
    sim_result: dict[str, Any],
    evidence: Path,
    broker_text: str,
    args: argparse.Namespace,
) -> None:
    status = watcher.status
    print()
    print(f"Summary — {permit.event_name} ({broker_text})")
    print(f"  messages published by the simulator: {sim_result.get('published', 'n/a')}")
    for spec in permit.sources.values() if getattr(args, "lorawan", False) else ():
        print(
            f"  {spec.sensor}: a LoRaWAN device ({spec.format}) on {spec.topic}, via kent-ops adapt"
        )
    if status:
        att = status.attendance
        print(
            f"  attendance {att.current:,} (peak {att.peak:,}), entries {att.entries:,}, "
            f"rejected messages {status.rejected}"
        )
    for line in alert_summary(list(watcher.alerts.values())):
        print(line)
    default = LORAWAN_PERMIT if getattr(args, "lorawan", False) else EXAMPLE_PERMIT
    permit_path = Path(getattr(args, "permit", None) or default).absolute()
    evidence = evidence.absolute()
    kent_ops = kent_ops_command()
    print(f"  evidence log: {evidence}")
    print(f"  verify it:    {kent_ops} verify {shlex.quote(str(evidence))}")
    print(
        f"  report:       {kent_ops} report --permit {shlex.quote(str(permit_path))} "
        f"--evidence {shlex.quote(str(evidence))} "
        f"--out {shlex.quote(str(evidence.parent / 'report'))}"
    )


def alert_summary(alerts: list[wire.Alert], shown: int = 12) -> list[str]:
    """The day's alerts as a person wants them: every breach first, by id, then the
    warnings and data notes counted by kind (never a list of sensor-offline notes)."""
    breaches = sorted((a for a in alerts if a.severity == "breach"), key=lambda a: a.id)
    noun = "breach" if len(breaches) == 1 else "breaches"
    lines = [f"  alerts raised: {len(alerts)} ({len(breaches)} {noun})"]
    lines += [f"    {a.id} {a.rule:<20} {a.state:<8} {shown_message(a)}" for a in breaches[:shown]]
    if len(breaches) > shown:
        lines.append(f"    … and {len(breaches) - shown} more breaches")
    rest = Counter((a.severity, a.rule) for a in alerts if a.severity != "breach")
    if rest:
        order = {"warning": 0, "data": 1}
        kinds = sorted(rest.items(), key=lambda kv: (order.get(kv[0][0], 2), -kv[1], kv[0][1]))
        lines.append(
            "  and " + ", ".join(f"{n} {rule} ({severity})" for (severity, rule), n in kinds)
        )
    return lines
