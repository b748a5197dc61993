"""The ``kent-ops`` command line (SPEC 8): one entry point, one sub-command per job.

Each command's work lives in its own module and is imported only when that command
runs, so ``kent-ops verify`` does not pay for Textual or pandas. Errors reach the user
as one sentence on stderr, never a traceback; exit codes are 0 ok, 1 findings or a
failed check, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from kent_ops import __version__
from kent_ops.broker.client import DEFAULT_BROKER_URL
from kent_ops.core.errors import KentOpsError

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one sentence and exit 2, like every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"kent-ops: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _command(target: str) -> Callable[[argparse.Namespace], int]:
    """Resolve ``module:function`` lazily so each command imports only what it needs."""

    def run(args: argparse.Namespace) -> int:
        module_name, func_name = target.split(":")
        module = importlib.import_module(module_name)
        return int(getattr(module, func_name)(args) or 0)

    return run


def _add_broker(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--broker",
        default=DEFAULT_BROKER_URL,
        metavar="URL",
        help="mqtt://[user:pass@]host:port or mqtts://… (default %(default)s)",
    )
    p.add_argument("--ca-file", metavar="PEM", help="CA certificate for mqtts:// brokers")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kent-ops",
        description="Event-day operations monitor for the Town of Kent mass-gathering law.",
    )
    parser.add_argument("--version", action="version", version=f"kent-ops {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "demo",
        help="the whole system on one machine: broker, simulated festival, aggregator, dashboard",
    )
    _add_broker_optional(p)
    p.add_argument("--speed", type=_positive_float, default=60.0, help="simulated time factor")
    p.add_argument("--scenario", default="festival", help="festival, quiet or faults")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--headless", action="store_true", help="no dashboard; print a summary")
    p.add_argument("--duration", type=_positive_float, help="stop after S seconds (wall clock)")
    p.add_argument("--out", metavar="DIR", help="keep the evidence log in DIR")
    p.add_argument("--permit", metavar="P", help="permit file (default: examples/permit.toml)")
    p.set_defaults(func=_command("kent_ops.commands.demo:cli_demo"))

    p = sub.add_parser("run", help="the aggregator service")
    p.add_argument("--permit", required=True, metavar="P", help="the permit file (TOML)")
    p.add_argument("--evidence", required=True, metavar="E", help="the evidence log (SQLite)")
    _add_broker(p)
    p.add_argument(
        "--clock",
        choices=("wall", "sensor"),
        default="wall",
        help="wall: receive time; sensor: the payloads' ts (simulations, replays, tests)",
    )
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=_command("kent_ops.commands.run:cli_run"))

    p = sub.add_parser("dashboard", help="the inspector dashboard")
    p.add_argument("--event", required=True, metavar="ID")
    _add_broker(p)
    p.add_argument("--inspector", default="inspector", metavar="ID", help="signs notes and acks")
    p.set_defaults(func=_command("dashboards.inspector.app:cli_dashboard"))

    p = sub.add_parser("gate", help="the deputy's gate view: ADMIT / HOLD and a manual tally")
    p.add_argument("gate", metavar="GATE")
    p.add_argument("--event", required=True, metavar="ID")
    _add_broker(p)
    p.add_argument("--state-dir", metavar="DIR", help="where the manual tally is kept")
    p.add_argument("--keys", metavar="FILE", help="signing keys file, when the event signs")
    p.set_defaults(func=_command("dashboards.gate.app:cli_gate"))

    p = sub.add_parser("simulate", help="simulated sensors for a permit")
    p.add_argument("--permit", required=True, metavar="P")
    p.add_argument("--scenario", default="festival", help="festival, quiet, faults or a .toml")
    p.add_argument("--speed", type=_positive_float, default=60.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start", metavar="ISO", help="simulated start time (default: first window)")
    p.add_argument("--duration", type=_positive_float, help="simulated seconds to run")
    _add_broker(p)
    p.set_defaults(func=_command("sensors.simulator:cli_simulate"))

    p = sub.add_parser("permit", help="permit file commands")
    permit_sub = p.add_subparsers(dest="permit_command", metavar="COMMAND", parser_class=_Parser)
    permit_sub.required = True
    pc = permit_sub.add_parser("check", help="validate a permit and print pre-event findings")
    pc.add_argument("permit", metavar="P")
    pc.set_defaults(func=_command("kent_ops.commands.permit_check:cli_check"))

    p = sub.add_parser("report", help="the post-event compliance report")
    p.add_argument("--permit", required=True, metavar="P")
    p.add_argument("--evidence", required=True, metavar="E")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--pdf", action="store_true", help="also write DIR/report.pdf (chromium)")
    p.set_defaults(func=_command("kent_ops.commands.report:cli_report"))

    p = sub.add_parser("verify", help="recompute the evidence log's hash chain")
    p.add_argument("evidence", metavar="E")
    p.set_defaults(func=_command("kent_ops.commands.verify:cli_verify"))

    p = sub.add_parser(
        "clerk",
        help="the Town Clerk revokes or reinstates the permit from an instant on (permit:G)",
    )
    clerk_sub = p.add_subparsers(dest="clerk_command", metavar="COMMAND", parser_class=_Parser)
    clerk_sub.required = True
    for name, what in (("revoke", "revoke the permit"), ("reinstate", "issue it again")):
        pc = clerk_sub.add_parser(
            name,
            help=f"{what}, by a resolution of the Town Board",
            epilog=(
                f"example: kent-ops clerk {name} --event kent-summer-fest-2027 "
                "--resolution TB-2027-41 --reason 'no doctor on site since 14:10'"
            ),
        )
        pc.add_argument("--event", required=True, metavar="ID", help="the event id of the permit")
        pc.add_argument(
            "--resolution", required=True, metavar="ID", help="the Town Board's resolution"
        )
        pc.add_argument("--reason", default="", metavar="TEXT", help="why, in one sentence")
        pc.add_argument(
            "--effective-at",
            metavar="ISO",
            help="when it takes effect, with an offset (default: now; never more than a "
            "minute in the past)",
        )
        pc.add_argument(
            "--clerk", default="clerk", metavar="ID", help="your clerk id (default %(default)s)"
        )
        pc.add_argument(
            "--wait",
            type=_positive_float,
            default=10.0,
            metavar="S",
            help="how long to wait for the aggregator to show it (default %(default)s s)",
        )
        _add_broker(pc)
        pc.set_defaults(func=_command("kent_ops.commands.clerk:cli_clerk"))

    p = sub.add_parser("deploy", help="field deployment: broker ACL, certificates and signing keys")
    deploy_sub = p.add_subparsers(dest="deploy_command", metavar="COMMAND", parser_class=_Parser)
    deploy_sub.required = True
    pa = deploy_sub.add_parser("acl", help="write the Mosquitto ACL for a permit")
    pa.add_argument("--permit", required=True, metavar="P")
    pa.add_argument(
        "--inspector", action="append", default=[], metavar="ID", help="an inspector's id"
    )
    pa.add_argument(
        "--clerk", action="append", default=[], metavar="ID", help="a Town Clerk's id (permit:G)"
    )
    pa.add_argument(
        "--notifier", action="append", default=[], metavar="ID", help="a kent-ops notify id"
    )
    pa.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    pa.set_defaults(func=_command("kent_ops.commands.deploy:cli_acl"))
    pcert = deploy_sub.add_parser("certs", help="make a self-signed CA and a broker certificate")
    pcert.add_argument("--out", required=True, metavar="DIR")
    pcert.add_argument("--host", action="append", default=[], metavar="NAME")
    pcert.set_defaults(func=_command("kent_ops.commands.deploy:cli_certs"))
    pkeys = deploy_sub.add_parser(
        "keys", help="make a signing keys file: one HMAC key per sensor of the permit"
    )
    pkeys.add_argument("--permit", required=True, metavar="P")
    pkeys.add_argument("--out", required=True, metavar="FILE", help="the new keys file (TOML)")
    pkeys.set_defaults(func=_command("kent_ops.commands.deploy:cli_keys"))
    return parser


def _add_broker_optional(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--broker",
        default=None,
        metavar="URL",
        help="use this broker instead of starting one (mqtt://host:port or mqtts://…)",
    )
    p.add_argument("--ca-file", metavar="PEM", help="CA certificate for mqtts:// brokers")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; turn every expected failure into one sentence and an exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KentOpsError as exc:
        sys.stderr.write(f"kent-ops: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("kent-ops: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
