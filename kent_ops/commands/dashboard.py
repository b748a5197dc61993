"""``kent-ops dashboard``: the inspector's live view of one event, until the inspector quits.

With ``--clerk ID`` it is the Town Clerk's: the same view, plus the key that revokes or
reinstates the permit (permit:G).
"""

from __future__ import annotations

import argparse

from dashboards.inspector.app import make_inspector_app
from kent_ops.broker.credentials import broker_from_args

__all__ = ["cli_dashboard"]


def cli_dashboard(args: argparse.Namespace) -> int:
    """Build the inspector dashboard from the command line's arguments and run it."""
    broker = broker_from_args(args)
    app = make_inspector_app(
        args.event, broker, args.inspector, clerk=args.clerk, ca_file=args.ca_file
    )
    app.run()
    return 0
