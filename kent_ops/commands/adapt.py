"""``kent-ops adapt``: the adapter service, from the command line, until a signal.

Argument checks (each one sentence, exit 2), the devices' broker and its password
(never on the command line), the optional HTTPS endpoint, SIGINT/SIGTERM for a clean
stop; the service itself is :class:`kent_ops.adapter.service.Adapter`.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import ssl
import sys
from dataclasses import replace
from pathlib import Path
from types import FrameType

from kent_ops.adapter.http import HttpIntake, read_tokens
from kent_ops.adapter.service import Adapter
from kent_ops.adapter.state import DEFAULT_STATE_DIR, StateFile
from kent_ops.broker.client import BrokerAddress, parse_broker_url
from kent_ops.broker.credentials import broker_from_args, read_password_file
from kent_ops.commands.run import configure_logging
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import keys_for_permit

__all__ = ["ENV_SOURCE_PASSWORD", "cli_adapt", "source_broker"]

log = logging.getLogger("adapter")
ENV_SOURCE_PASSWORD = "KENT_OPS_SOURCE_PASSWORD"


def source_broker(
    url: str | None,
    password_file: str | None,
    event: BrokerAddress,
    environ: dict[str, str] | None = None,
) -> BrokerAddress:
    """The devices' broker: ``--source-broker`` with its password from the file or the
    environment, else the event's own broker."""
    if url is None:
        return event
    env = os.environ if environ is None else environ
    address = parse_broker_url(url)
    if address.password is not None:
        sys.stderr.write(
            "kent-ops: warning: a password in --source-broker is visible to every local user "
            f"(ps); use --source-password-file or {ENV_SOURCE_PASSWORD} instead\n"
        )
        return address
    if password_file is not None:
        return replace(address, password=read_password_file(password_file))
    if env.get(ENV_SOURCE_PASSWORD):
        return replace(address, password=env[ENV_SOURCE_PASSWORD])
    return address


def _check_files(*paths: str | None) -> None:
    for path in paths:
        if path is not None and not Path(path).is_file():
            raise UsageError(f"{path}: no such file")


def _http(args: argparse.Namespace, permit: Permit, adapter: Adapter) -> HttpIntake | None:
    """The HTTPS endpoint when the permit has HTTP devices (and only then)."""
    sensors = [s.sensor for s in permit.sources.values() if s.http]
    if not sensors:
        if args.http_listen:
            raise UsageError("--http-listen: no source in the permit has http = true")
        return None
    if not args.http_listen or not args.tokens:
        raise UsageError(
            f"{', '.join(sensors)} post over HTTP: give --http-listen HOST:PORT, --tls-cert, "
            "--tls-key and --tokens"
        )
    host, _, port_text = args.http_listen.rpartition(":")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise UsageError(
            f"--http-listen {args.http_listen!r} must be HOST:PORT, the port 1 to 65535"
        )
    tls = None
    if args.tls_cert or args.tls_key:
        if not (args.tls_cert and args.tls_key):
            raise UsageError("--tls-cert and --tls-key go together")
        _check_files(args.tls_cert, args.tls_key)
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            tls.load_cert_chain(args.tls_cert, args.tls_key)
        except (ssl.SSLError, OSError) as exc:
            raise UsageError(f"cannot use {args.tls_cert} with {args.tls_key}: {exc}") from None
    elif host not in ("127.0.0.1", "localhost", "::1"):
        raise UsageError(
            "devices' tokens must not cross a network in clear: give --tls-cert and --tls-key "
            "(plain HTTP is for 127.0.0.1 only)"
        )
    tokens = read_tokens(args.tokens, sensors)
    return HttpIntake(adapter, tokens, host, int(port_text), tls)


def cli_adapt(args: argparse.Namespace) -> int:
    """``kent-ops adapt``: serve until SIGINT/SIGTERM; 0 on a clean stop."""
    permit = load_permit(args.permit)
    if not permit.sources:
        raise UsageError(f"{args.permit}: no gate or lot has a source table; nothing to adapt")
    event = broker_from_args(args)
    source = source_broker(args.source_broker, args.source_password_file, event)
    _check_files(args.ca_file, args.source_ca_file)
    state_dir = Path(args.state_dir) if args.state_dir else DEFAULT_STATE_DIR
    state = StateFile(state_dir, permit.event_id).load()
    try:
        keys = keys_for_permit(permit.signing_keys_file)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    configure_logging(args.log_level)
    adapter = Adapter(
        permit,
        event,
        source,
        state,
        keys=keys,
        event_ca=args.ca_file,
        source_ca=args.source_ca_file or (args.ca_file if args.source_broker is None else None),
    )
    intake = _http(args, permit, adapter)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        adapter.stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    adapter.start()
    if intake is not None:
        intake.start()
    names = ", ".join(f"{s.sensor} ({s.format})" for s in permit.sources.values())
    log.info("adapting %s; state in %s", names, state.path)
    try:
        while not adapter.stopping.wait(0.5):
            pass
    finally:
        if intake is not None:
            intake.stop()
        adapter.wait(30)
    log.info("stopped: %d translated, %d unreadable", adapter.translated, adapter.unreadable)
    return 0
