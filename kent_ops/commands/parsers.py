"""The arguments of every ``kent-ops`` command: help, defaults and an example each.

Kept apart from the commands themselves so that parsing the command line imports
nothing heavy (Textual, pandas): each command's module is imported only when it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeAlias

from kent_ops.broker.credentials import add_broker_arguments

__all__ = [
    "COMMANDS",
    "EXAMPLE_EVENT",
    "Sub",
    "add_witness_check",
    "add_witness_keep",
    "new_command",
    "positive_float",
]

EXAMPLE_EVENT = "kent-summer-fest-2027"
Sub: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


DEMO_BROKER = (
    "a private broker the demo starts for itself on a free port: Mosquitto if it is "
    "installed, else an embedded one"
)
"""What the demo talks to without ``--broker``, as its help says."""


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0")
    return value


def new_command(
    sub: Sub, name: str, summary: str, examples: list[str], target: str
) -> argparse.ArgumentParser:
    """A command with its one-line summary, its examples, and the function that runs it."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    p = sub.add_parser(
        name,
        help=summary,
        description=summary,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(target=target)
    return p


def new_group(sub: Sub, name: str, summary: str, examples: list[str]) -> argparse.ArgumentParser:
    """A command of commands (``clerk``, ``deploy``, ``serve users``): its summary and
    examples of each of its commands, so its own ``--help`` shows how to start."""
    return sub.add_parser(
        name,
        help=summary,
        description=summary,
        epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _event(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--event",
        required=True,
        metavar="ID",
        help=f"the event id: the [event] id of the permit, e.g. {EXAMPLE_EVENT}",
    )


def _demo(sub: Sub) -> None:
    p = new_command(
        sub,
        "demo",
        "the whole system on one machine: a broker, a simulated festival day, the aggregator "
        "and the inspector dashboard",
        [
            "kent-ops demo",
            "kent-ops demo --speed 120 --scenario faults",
            "kent-ops demo --headless --duration 60",
        ],
        "kent_ops.commands.demo:cli_demo",
    )
    add_broker_arguments(p, default=None, unset=DEMO_BROKER)
    p.add_argument(
        "--speed",
        type=positive_float,
        default=60.0,
        metavar="X",
        help="simulated seconds per real second (default %(default)g)",
    )
    p.add_argument(
        "--scenario",
        default="festival",
        metavar="NAME",
        help="festival (a mid-afternoon peak, a sold-out surge past the permitted maximum, a "
        "nurse shift-change gap, exits in the evening), quiet (a small afternoon gathering, "
        "fully staffed and under every limit), faults (a counter restart, a counter offline "
        "for ten minutes, duplicated redeliveries, malformed messages), or a scenario .toml "
        "file (examples/scenario.toml explains every key; default %(default)s)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        metavar="N",
        help="the simulation's random seed: the same seed, the same day (default %(default)s)",
    )
    p.add_argument(
        "--headless", action="store_true", help="no dashboard; print a summary at the end"
    )
    p.add_argument(
        "--duration",
        type=positive_float,
        metavar="S",
        help="stop after S real seconds (default: when the simulated day ends)",
    )
    p.add_argument(
        "--out", metavar="DIR", help="keep the evidence log in DIR (default: a temporary folder)"
    )
    p.add_argument("--permit", metavar="P", help="the permit file (default: examples/permit.toml)")
    p.add_argument(
        "--lorawan",
        action="store_true",
        help="run the north gate and lot A as rented LoRaWAN devices through kent-ops adapt "
        "(default permit: examples/permit-lorawan.toml)",
    )


def _run(sub: Sub) -> None:
    p = new_command(
        sub,
        "run",
        "the aggregator service: sensors in, evidence log, status, alerts and gate orders out",
        [
            "kent-ops run --permit permit.toml --evidence evidence.sqlite",
            "KENT_OPS_BROKER=mqtt://kent-ops-aggregator@127.0.0.1:1883 "
            "KENT_OPS_BROKER_PASSWORD=… kent-ops run --permit P --evidence E",
        ],
        "kent_ops.commands.run:cli_run",
    )
    p.add_argument("--permit", required=True, metavar="P", help="the permit file (TOML)")
    p.add_argument(
        "--evidence",
        required=True,
        metavar="E",
        help="the evidence log (SQLite): created, or verified and continued",
    )
    add_broker_arguments(p)
    p.add_argument(
        "--clock",
        choices=("wall", "sensor"),
        default="wall",
        help="wall: each message's receive time (the field); sensor: the payloads' ts "
        "(simulations, replays, tests) (default %(default)s)",
    )
    p.add_argument(
        "--snapshot-every",
        type=positive_float,
        default=300.0,
        metavar="S",
        help="write the engine's whole state into the evidence log every S seconds (and at "
        "a clean stop); a restart starts from the last one and replays only what follows, "
        "e.g. --snapshot-every 600 (default %(default)g)",
    )
    p.add_argument(
        "--accept-rollback",
        action="store_true",
        help="go on with an evidence log found behind the broker's retained checkpoint or "
        "its head file (committed records missing): the finding is recorded in the log and "
        "raised as an alert; without it such a log is refused (exit 2)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="how much the service logs to stderr (default %(default)s)",
    )


def _dashboard(sub: Sub) -> None:
    p = new_command(
        sub,
        "dashboard",
        "the inspector dashboard: attendance, staffing, parking, alerts; acknowledge, note, adjust",
        [
            f"kent-ops dashboard --event {EXAMPLE_EVENT} --inspector insp-1",
            f"kent-ops dashboard --event {EXAMPLE_EVENT} --inspector insp-1 "
            "--broker mqtts://inspector-insp-1@broker.local:8883 --ca-file ca.crt "
            "--password-file ~/.kent-ops-password",
            f"kent-ops dashboard --event {EXAMPLE_EVENT} --clerk town-clerk "
            "--broker mqtts://clerk-town-clerk@broker.local:8883 --ca-file ca.crt "
            "--password-file ~/.kent-ops-password",
        ],
        "kent_ops.commands.dashboard:cli_dashboard",
    )
    _event(p)
    add_broker_arguments(p)
    p.add_argument(
        "--inspector",
        default="inspector",
        metavar="ID",
        help="your inspector id: signs your notes and acknowledgements (default %(default)s)",
    )
    p.add_argument(
        "--clerk",
        metavar="ID",
        help="your Town Clerk id, if you are the Clerk: adds the key R, which revokes or "
        "reinstates the permit by resolution (permit:G), e.g. town-clerk",
    )
    add_witness_keep(p, "~/.local/state/kent-ops/witness/EVENT.jsonl")


def _gate(sub: Sub) -> None:
    p = new_command(
        sub,
        "gate",
        "the deputy's gate view: ADMIT or HOLD, the gate's counts, and a manual tally",
        [
            f"kent-ops gate north --event {EXAMPLE_EVENT}",
            f"kent-ops gate north --event {EXAMPLE_EVENT} "
            "--broker mqtts://deputy-north@broker.local:8883 --ca-file ca.crt",
        ],
        "kent_ops.commands.gate:cli_gate",
    )
    p.add_argument("gate", metavar="GATE", help="the gate's id in the permit, e.g. north")
    _event(p)
    add_broker_arguments(p)
    p.add_argument(
        "--state-dir",
        metavar="DIR",
        help="where the manual tally is kept (default ~/.local/state/kent-ops)",
    )
    p.add_argument(
        "--keys", metavar="FILE", help="the tally's signing key file, when the event signs"
    )
    add_witness_keep(p, "witness/EVENT.jsonl in the state folder")


def _simulate(sub: Sub) -> None:
    p = new_command(
        sub,
        "simulate",
        "simulated gate counters, lot sensors and badge readers for a permit",
        [
            "kent-ops simulate --permit examples/permit.toml --speed 60",
            "kent-ops simulate --permit P --scenario faults --seed 7 --simulated-duration 3600",
        ],
        "kent_ops.commands.simulate:cli_simulate",
    )
    p.add_argument(
        "--permit", required=True, metavar="P", help="the permit whose sensors to simulate"
    )
    p.add_argument(
        "--scenario",
        default="festival",
        metavar="NAME",
        help="festival (a mid-afternoon peak, a sold-out surge past the permitted maximum, a "
        "nurse shift-change gap, exits in the evening), quiet (a small afternoon gathering, "
        "fully staffed and under every limit), faults (a counter restart, a counter offline "
        "for ten minutes, duplicated redeliveries, malformed messages), or a scenario .toml "
        "file (examples/scenario.toml explains every key; default %(default)s)",
    )
    p.add_argument(
        "--speed",
        type=positive_float,
        default=60.0,
        metavar="X",
        help="simulated seconds per real second (default %(default)g)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        metavar="N",
        help="the random seed: the same seed, the same day (default %(default)s)",
    )
    p.add_argument(
        "--start",
        metavar="ISO",
        help="simulated start, with an offset (default: the first window's start)",
    )
    p.add_argument(
        "--duration",
        type=positive_float,
        metavar="S",
        help="stop after S real seconds, as kent-ops demo --duration (default: the whole scenario)",
    )
    p.add_argument(
        "--simulated-duration",
        type=positive_float,
        metavar="S",
        help="stop after S simulated seconds (3600 at --speed 60 is one real minute)",
    )
    add_broker_arguments(p)


def _permit(sub: Sub) -> None:
    p = sub.add_parser("permit", help="permit file commands (check)")
    permit_sub = p.add_subparsers(dest="permit_command", metavar="COMMAND", parser_class=type(p))
    permit_sub.required = True
    pc = new_command(
        permit_sub,
        "check",
        "validate a permit file and print the pre-event findings (exit 0 none is a breach, "
        "1 a breach, 2 an invalid file)",
        ["kent-ops permit check examples/permit.toml"],
        "kent_ops.commands.permit_check:cli_check",
    )
    pc.add_argument("permit", metavar="P", help="the permit file (TOML)")


def _report(sub: Sub) -> None:
    p = new_command(
        sub,
        "report",
        "the post-event compliance report for the Town Board: a replay of the evidence log; "
        "the last line is the verdict (exit 0 NO BREACH FOUND, 1 BREACHED or RECORD "
        "INCOMPLETE, 2 bad input)",
        [
            "kent-ops report --permit permit.toml --evidence evidence.sqlite --out report/",
            "kent-ops report --permit P --evidence E --out DIR --pdf",
        ],
        "kent_ops.commands.report:cli_report",
    )
    p.add_argument(
        "--permit", required=True, metavar="P", help="the permit the log was recorded under"
    )
    p.add_argument("--evidence", required=True, metavar="E", help="the evidence log (SQLite)")
    p.add_argument(
        "--out", required=True, metavar="DIR", help="the folder to write the report into"
    )
    p.add_argument("--pdf", action="store_true", help="also write report.pdf for the Board packet")


def _verify(sub: Sub) -> None:
    p = new_command(
        sub,
        "verify",
        "recompute the evidence log's hash chain and check it against its head file and any "
        "checkpoint or witness given: OK <records> <head hash>, or FAIL record N: what is wrong",
        [
            "kent-ops verify /var/lib/kent-ops/evidence.sqlite",
            "kent-ops verify evidence.sqlite --checkpoint 18233:9f2c…",
            "kent-ops verify evidence.sqlite "
            "--witness ~/.local/state/kent-ops/witness/kent-summer-fest-2027.jsonl",
        ],
        "kent_ops.commands.verify:cli_verify",
    )
    p.add_argument(
        "evidence",
        metavar="E",
        help="the evidence log (SQLite); its head file E.head, when beside it, is checked too",
    )
    p.add_argument(
        "--checkpoint",
        action="append",
        metavar="N:HASH",
        help="a checkpoint kept elsewhere (the broker's retained one, one an inspector "
        "noted): the log must hold record N with this hash (repeatable)",
    )
    add_witness_check(p)


def add_witness_keep(p: argparse.ArgumentParser, default: str) -> None:
    """``--witness FILE``: where a command that receives checkpoints keeps them
    (:mod:`kent_ops.commands.witnessing`)."""
    p.add_argument(
        "--witness",
        metavar="FILE",
        help="keep every checkpoint of the evidence log received, as received, in this "
        f"witness file, for kent-ops verify --witness (default {default})",
    )


def add_witness_check(p: argparse.ArgumentParser) -> None:
    """``--witness FILE`` (repeatable): witness files whose checkpoints the log must hold."""
    p.add_argument(
        "--witness",
        action="append",
        metavar="FILE",
        help="a witness file kept by a dashboard, gate view or notifier: the log must hold "
        "every checkpoint in it, with the same hash (repeatable)",
    )


def _bundle(sub: Sub) -> None:
    p = new_command(
        sub,
        "bundle",
        "one archive for the Town attorney: the evidence log, its head file, the permit, the "
        "report, the witness files, a manifest, a README and a verify.py that needs only Python",
        [
            "kent-ops bundle --permit permit.toml --evidence evidence.sqlite --out evidence.zip",
            "kent-ops bundle --permit P --evidence E --out F.zip "
            "--witness insp-1.jsonl --witness notify.jsonl",
        ],
        "kent_ops.commands.bundle:cli_bundle",
    )
    p.add_argument(
        "--permit", required=True, metavar="P", help="the permit the log was recorded under"
    )
    p.add_argument(
        "--evidence",
        required=True,
        metavar="E",
        help="the evidence log (SQLite), copied consistently even while the aggregator writes",
    )
    p.add_argument("--out", required=True, metavar="F.zip", help="the archive to write (new)")
    add_witness_check(p)


COMMANDS: tuple[Callable[[Sub], None], ...] = (
    _demo,
    _run,
    _dashboard,
    _gate,
    _simulate,
    _permit,
    _report,
    _verify,
    _bundle,
)
"""Each adds one command (or group) to the ``kent-ops`` parser, in the order of --help."""
