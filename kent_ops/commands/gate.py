"""``kent-ops gate GATE``: the deputy's gate view (ADMIT / HOLD and a manual tally)."""

from __future__ import annotations

import argparse

from dashboards.gate.app import make_gate_app
from dashboards.gate.tally import manual_gate
from kent_ops.broker.credentials import broker_from_args
from kent_ops.core.errors import UsageError
from kent_ops.core.wire import load_keys

__all__ = ["cli_gate"]


def _signing_key(keys_file: str | None, gate: str) -> bytes | None:
    """The manual tally's key when the event signs its messages (docs/protocol.md)."""
    if not keys_file:
        return None
    try:
        keys = load_keys(keys_file)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    counter = manual_gate(gate)
    if counter not in keys:
        raise UsageError(f"the signing keys file {keys_file} has no key for {counter}")
    return keys[counter]


def cli_gate(args: argparse.Namespace) -> int:
    """Build the gate view from the command line's arguments and run it until the deputy quits."""
    broker = broker_from_args(args)
    app = make_gate_app(
        args.gate,
        args.event,
        broker,
        state_dir=args.state_dir,
        ca_file=args.ca_file,
        signing_key=_signing_key(args.keys, args.gate),
    )
    app.run()
    return 0
