"""``kent-ops gate GATE``: the deputy's gate view (ADMIT / HOLD and a manual tally).

Before the view starts, the aggregator's retained status (which lists the permit's
gates) is read with a short wait: a gate the permit does not have is refused in one
sentence (exit 2), instead of a view that would wait for an order that never comes.
With no answer in time (no broker yet, a refused account), the view starts and says
what is wrong itself. Every checkpoint of the evidence log the view receives is kept in
a witness file (``--witness``, by default ``witness/{event}.jsonl`` in the state folder).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

from dashboards.gate.app import make_gate_app
from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.credentials import broker_from_args
from kent_ops.broker.retained import read_retained
from kent_ops.broker.witness import DEFAULT_WITNESS_DIR, default_witness_path
from kent_ops.commands.witnessing import open_witness
from kent_ops.core import wire
from kent_ops.core.errors import UsageError
from kent_ops.core.gate_view import deputy_gate_problem, manual_gate, tally_listed
from kent_ops.core.wire import load_keys

__all__ = ["CHECK_WAIT_S", "cli_gate"]

CHECK_WAIT_S = 3.0
"""How long the start waits for the broker's retained status before going on unchecked."""


def _signing_key(keys_file: str | None, gate: str, tally: bool | None) -> bytes | None:
    """The manual tally's key when the event signs its messages (docs/protocol.md); a
    gate whose permit has no tally (``tally`` False) needs none."""
    if not keys_file:
        return None
    try:
        keys = load_keys(keys_file)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    counter = manual_gate(gate)
    if counter not in keys and tally is not False:
        raise UsageError(f"the signing keys file {keys_file} has no key for {counter}")
    return keys.get(counter)


def _check_gate(
    broker: BrokerAddress, event_id: str, gate: str, ca_file: str | None
) -> bool | None:
    """Refuse a gate that the aggregator's status does not list (a typo: ``nrth``).

    Returns whether the gate has a manual tally in the permit (None: no status said).
    """
    answer = read_retained(
        broker, wire.Topics(event_id).status, ca_file=ca_file, wait_s=CHECK_WAIT_S
    )
    if answer.payload is None:
        return None  # no answer, or no aggregator yet: the view says so itself
    try:
        status = wire.decode_json(wire.Status, answer.payload)
    except (msgspec.DecodeError, ValueError):
        return None
    if not status.gates:
        return None
    gates = {g: state.manual for g, state in status.gates.items()}
    problem = deputy_gate_problem(gate, gates, f"the permit of event {event_id}")
    if problem is not None:
        raise UsageError(problem)
    return tally_listed(status, gate)


def cli_gate(args: argparse.Namespace) -> int:
    """Build the gate view from the command line's arguments and run it until the deputy quits."""
    broker = broker_from_args(args)
    tally = _check_gate(broker, args.event, args.gate, args.ca_file)
    folder = Path(args.state_dir) / "witness" if args.state_dir else DEFAULT_WITNESS_DIR
    witness = open_witness(
        getattr(args, "witness", None),
        default_witness_path(args.event, folder),
        args.event,
        f"deputy-{args.gate}",
    )
    app = make_gate_app(
        args.gate,
        args.event,
        broker,
        state_dir=args.state_dir,
        ca_file=args.ca_file,
        signing_key=_signing_key(args.keys, args.gate, tally),
        witness=witness,
    )
    try:
        app.run()
    finally:
        if witness is not None:
            witness.close()
    return 0
