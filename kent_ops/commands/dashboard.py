"""``kent-ops dashboard``: the inspector's live view of one event, until the inspector quits.

With ``--clerk ID`` it is the Town Clerk's: the same view, plus the key that revokes or
reinstates the permit (permit:G). Every checkpoint of the evidence log it receives is
kept in a witness file (``--witness``, by default
``~/.local/state/kent-ops/witness/{event}.jsonl``).
"""

from __future__ import annotations

import argparse

from dashboards.inspector.app import make_inspector_app
from kent_ops.broker.credentials import broker_from_args
from kent_ops.broker.witness import default_witness_path
from kent_ops.commands.witnessing import open_witness

__all__ = ["cli_dashboard"]


def cli_dashboard(args: argparse.Namespace) -> int:
    """Build the inspector dashboard from the command line's arguments and run it."""
    broker = broker_from_args(args)
    by = f"clerk-{args.clerk}" if args.clerk else f"inspector-{args.inspector}"
    witness = open_witness(
        getattr(args, "witness", None), default_witness_path(args.event), args.event, by
    )
    app = make_inspector_app(
        args.event, broker, args.inspector, clerk=args.clerk, ca_file=args.ca_file, witness=witness
    )
    try:
        app.run()
    finally:
        if witness is not None:
            witness.close()
    return 0
