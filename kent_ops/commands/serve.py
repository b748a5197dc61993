"""``kent-ops serve``: the dashboards in a web browser, and ``kent-ops serve users``.

``serve`` checks its arguments (each problem one sentence, exit 2), then runs the web
server of :mod:`kent_ops.web.server` until SIGINT or SIGTERM. ``serve users add``
asks for the password twice without echo (never from the command line) and stores
only its scrypt hash; the password must be the person's broker password, because
that is what their app connects with (docs/architecture.md, "Dashboards in a browser").
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import ipaddress
import os
import ssl
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kent_ops.broker.client import DEFAULT_BROKER_URL, parse_broker_url
from kent_ops.broker.credentials import ENV_URL, read_password_file
from kent_ops.broker.witness import WitnessKeeper, default_witness_path
from kent_ops.commands.run import configure_logging
from kent_ops.commands.witnessing import open_witness
from kent_ops.core.errors import UsageError
from kent_ops.core.gate_view import deputy_gate_problem, manual_gate
from kent_ops.core.permit import ID_PATTERN, load_permit
from kent_ops.core.wire import load_keys
from kent_ops.web.accounts import check_account, load_accounts, make_account, save_accounts
from kent_ops.web.apps import AppConfig, prepare_apps

if TYPE_CHECKING:
    from kent_ops.web.gate_hub import GateSettings

__all__ = ["DEFAULT_USERS", "cli_serve", "cli_users", "users_file"]

DEFAULT_USERS = "/etc/kent-ops/users.json"
ENV_USERS = "KENT_OPS_USERS"
_PREPARING: set[asyncio.Task[None]] = set()
"""The fork server's start, held so that it is not collected half-way."""
LEAST_APP_MEMORY_MB = 128
"""Below this even a fresh app (about 55 MiB of heap) could fail for want of memory."""


def users_file(args: argparse.Namespace) -> Path:
    """``--users``, else ``$KENT_OPS_USERS``, else /etc/kent-ops/users.json."""
    return Path(args.users or os.environ.get(ENV_USERS) or DEFAULT_USERS)


def _listen(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {text!r} must be HOST:PORT, e.g. 0.0.0.0:8443")
    return host, int(port)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tls(args: argparse.Namespace, host: str) -> ssl.SSLContext | None:
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together: give both or neither")
    if not args.tls_cert:
        if not _is_loopback(host):
            raise UsageError(
                f"serving on {host} without TLS would send passwords in clear over the "
                "network; give --tls-cert and --tls-key (kent-ops deploy certs makes them)"
            )
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(args.tls_cert, args.tls_key)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"cannot use the certificate {args.tls_cert}: {exc}") from None
    return context


def _clerk_option() -> str:
    """``--clerk`` if ``kent-ops dashboard`` has it, else ``--inspector`` (older versions)."""
    from kent_ops.commands.cli import build_parser

    probe = ["dashboard", "--event", "e", "--clerk", "c"]
    try:
        _, extra = build_parser().parse_known_args(probe)
    except SystemExit:
        return "--inspector"
    return "--inspector" if "--clerk" in extra else "--clerk"


def _app_memory_mb(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise UsageError(f"--app-memory-mb {text!r} is not a whole number of MiB")
    if int(text) < LEAST_APP_MEMORY_MB:
        raise UsageError(f"--app-memory-mb {text} must be at least {LEAST_APP_MEMORY_MB}")
    return int(text)


def _app_config(args: argparse.Namespace) -> AppConfig:
    if not args.event:
        raise UsageError("kent-ops serve needs --event ID (the [event] id of the permit)")
    if not ID_PATTERN.fullmatch(args.event):
        raise UsageError(f"event id {args.event!r} must be lower-case letters, digits and dashes")
    url = args.broker or os.environ.get(ENV_URL) or DEFAULT_BROKER_URL
    broker = parse_broker_url(url)
    if broker.password is not None:
        sys.stderr.write(
            "kent-ops: warning: the password in the broker URL is ignored: each person's app "
            "connects with that person's own\n"
        )
    for name, path in (("--ca-file", args.ca_file), ("--keys", args.keys)):
        if path and not Path(path).is_file():
            raise UsageError(f"{name} {path}: no such file")
    return AppConfig(
        event_id=args.event,
        broker=replace(broker, username=None, password=None),
        ca_file=str(Path(args.ca_file).resolve()) if args.ca_file else None,
        state_dir=str(Path(args.state_dir).resolve()) if args.state_dir else None,
        keys=str(Path(args.keys).resolve()) if args.keys else None,
        clerk_option=_clerk_option(),
        memory_mb=_app_memory_mb(args.app_memory_mb),
        start=args.app_start,
    )


def _gate_settings(config: AppConfig) -> GateSettings:
    """The deputies' gate hubs, with the tally device they count on (the sensors' own gate
    counter, as the terminal's gate view uses): ``kent_ops.web`` may not import it."""
    from dashboards.gate.tally import DEFAULT_STATE_DIR, ManualTally
    from kent_ops.web.gate_hub import GateSettings

    folder = Path(config.state_dir) if config.state_dir else DEFAULT_STATE_DIR
    try:
        keys = load_keys(config.keys) if config.keys else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    def tally(gate: str, clock: Callable[[], datetime]) -> ManualTally:
        key = None
        if keys is not None:
            key = keys.get(manual_gate(gate))
            if key is None:
                raise UsageError(f"the signing keys file has no key for {manual_gate(gate)}")
        return ManualTally(config.event_id, gate, state_dir=folder, key=key, clock=clock)

    return GateSettings(tallies=tally, state_dir=folder)


def cli_serve(args: argparse.Namespace) -> int:
    """``kent-ops serve --event ID``: until SIGINT/SIGTERM; 0 on a clean stop."""
    from kent_ops.web.inspector_hub import InspectorSettings
    from kent_ops.web.server import ServeSettings, serve_forever

    config = _app_config(args)
    host, port = _listen(args.listen)
    context = _tls(args, host)
    path = users_file(args)
    accounts = load_accounts(path)
    if not accounts:
        raise UsageError(f"users file {path} has nobody in it: add people with serve users add")
    witness = _witness(args, config)
    settings = ServeSettings(
        apps=config,
        users_file=path,
        session_s=args.session_minutes * 60,
        tls=context is not None,
        gates=_gate_settings(config),
        inspectors=InspectorSettings(witness=witness.keep if witness is not None else None),
    )
    configure_logging(args.log_level)

    def announce(url: str) -> None:
        sys.stderr.write(
            f"kent-ops serve: {config.event_id} for {len(accounts)} accounts on {url} "
            f"(broker {config.broker.url})\n"
        )
        sys.stderr.flush()
        # Called as the server starts, in its event loop: the apps' fork server starts
        # with it, so the first person to sign in does not wait for the imports.
        task = asyncio.get_running_loop().create_task(prepare_apps(config))
        _PREPARING.add(task)
        task.add_done_callback(_PREPARING.discard)

    serve_forever(settings, host, port, ssl_context=context, announce=announce)
    return 0


def _witness(args: argparse.Namespace, config: AppConfig) -> WitnessKeeper | None:
    """The witness file the inspectors' hub keeps each checkpoint in (``--witness``, else
    ``witness/{event}.jsonl`` under the state folder)."""
    folder = Path(config.state_dir).expanduser() / "witness" if config.state_dir else None
    default = default_witness_path(config.event_id, folder)
    return open_witness(getattr(args, "witness", None), default, config.event_id, "serve")


def _check_gate(gate: str, permit_path: str | None) -> None:
    """A deputy's gate must be a gate of the event's permit (not a typo, not a tally)."""
    if not permit_path:
        raise UsageError(
            "a deputy needs --permit P as well: their --gate must be one of the permit's gates"
        )
    permit = load_permit(permit_path)
    gates = {g: g in permit.manual_gates for g in permit.gates}
    problem = deputy_gate_problem(gate, gates, f"the permit {permit.number}")
    if problem is not None:
        raise UsageError(problem)


def _ask_password(name: str) -> str:
    first = getpass.getpass(f"password for {name} (their broker password): ")
    second = getpass.getpass("again: ")
    if first != second:
        raise UsageError("the two passwords differ; nothing was changed")
    return first


def cli_users(args: argparse.Namespace) -> int:
    """``kent-ops serve users add|list|remove``."""
    path = users_file(args)
    command = args.users_command
    accounts = load_accounts(path, missing_ok=command == "add")
    if command == "list":
        if not accounts:
            print(f"nobody in {path}")
        for account in sorted(accounts.values(), key=lambda a: a.name):
            gate = account.gate or "-"
            print(f"{account.name}\t{account.role}\t{gate}\t{account.broker_user}")
        return 0
    if command == "remove":
        if accounts.pop(args.name, None) is None:
            raise UsageError(f"there is no user {args.name!r} in {path}")
        save_accounts(path, accounts)
        print(f"removed {args.name} from {path}; their open sessions end within a second")
        return 0
    check_account(args.name, args.role, args.gate)  # before asking for a password
    if args.role == "deputy":
        _check_gate(args.gate, args.permit)
    given = getattr(args, "password_file", None)
    password = read_password_file(given) if given else _ask_password(args.name)
    account = make_account(args.name, args.role, password, gate=args.gate)
    replaced = args.name in accounts
    accounts[args.name] = account
    save_accounts(path, accounts)
    print(
        f"{'replaced' if replaced else 'added'} {account.name} ({account.describe()}) in {path}; "
        f"the password must be broker user {account.broker_user}'s"
    )
    return 0
