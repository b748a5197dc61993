"""``kent-ops run``: the aggregator service, from the command line, until a signal.

Argument checks (each one sentence, exit 2), logging to stderr in a plain greppable
form, and SIGINT/SIGTERM for a clean stop; the service itself is
:class:`kent_ops.service.aggregator.Aggregator`.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from pathlib import Path
from types import FrameType

from kent_ops.broker.credentials import broker_from_args
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import load_permit
from kent_ops.service.aggregator import Aggregator, Timing

__all__ = ["cli_run", "configure_logging"]

log = logging.getLogger("aggregator")


class _UtcFormatter(logging.Formatter):
    """``2027-07-04T14:03:05Z INFO aggregator: message``: plain and greppable."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%SZ")
        self.converter = time.gmtime


def configure_logging(level: str) -> None:
    """Send the service's log lines to stderr at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_UtcFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def _evidence_path(text: str) -> Path:
    evidence = Path(text)
    if evidence.is_dir():
        raise UsageError(f"{evidence} is a folder; --evidence names the log file")
    if not evidence.parent.is_dir():
        raise UsageError(f"cannot create {evidence}: folder {evidence.parent} does not exist")
    return evidence


def cli_run(args: argparse.Namespace) -> int:
    """``kent-ops run``: serve until SIGINT/SIGTERM; 0 on a clean stop."""
    address = broker_from_args(args)
    permit = load_permit(args.permit)
    ca_file = getattr(args, "ca_file", None)
    if ca_file is not None and not Path(ca_file).is_file():
        raise UsageError(f"CA file {ca_file}: no such file")
    evidence = _evidence_path(args.evidence)
    configure_logging(getattr(args, "log_level", "info"))
    timing = Timing(engine_snapshot_s=args.snapshot_every)
    aggregator = Aggregator(
        permit,
        evidence,
        address,
        clock=args.clock,
        ca_file=ca_file,
        timing=timing,
        accept_rollback=getattr(args, "accept_rollback", False),
    )

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        aggregator.stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    aggregator.run_forever()
    if isinstance(aggregator.failure, UsageError):
        raise aggregator.failure  # a log found behind its checkpoint only once running
    return 1 if aggregator.failure is not None or aggregator.unrecorded else 0
