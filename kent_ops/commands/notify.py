"""``kent-ops notify``: the notifier service from the command line, until a signal.

Checks (each one sentence, exit 2): the broker, the permit, the config file (private,
every channel a URL apprise knows), the state file's folder and the witness file (every
checkpoint of the evidence log received is kept in ``--witness``, by default
``witness/{event}.jsonl`` beside the state file); then logging to stderr
like the aggregator's, and SIGINT/SIGTERM for a clean stop. The service itself is
:class:`kent_ops.notify.service.Notifier`.
"""

from __future__ import annotations

import argparse
import logging
import signal
from pathlib import Path
from types import FrameType

from kent_ops.broker.credentials import broker_from_args
from kent_ops.broker.witness import default_witness_path
from kent_ops.commands.run import configure_logging
from kent_ops.commands.witnessing import open_witness
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import load_permit
from kent_ops.notify.config import load_config
from kent_ops.notify.delivery import apprise_accepts, quiet_apprise
from kent_ops.notify.ledger import Ledger
from kent_ops.notify.service import Notifier

__all__ = ["cli_notify"]

log = logging.getLogger("notify")


def cli_notify(args: argparse.Namespace) -> int:
    """``kent-ops notify``: send until SIGINT/SIGTERM; 0 on a clean stop."""
    address = broker_from_args(args)
    permit = load_permit(args.permit)
    config = load_config(args.config, apprise_accepts)
    ca_file = getattr(args, "ca_file", None)
    if ca_file is not None and not Path(ca_file).is_file():
        raise UsageError(f"CA file {ca_file}: no such file")
    ledger = Ledger.load(config.state_file)
    witness = open_witness(
        getattr(args, "witness", None),
        default_witness_path(permit.event_id, config.state_file.parent / "witness"),
        permit.event_id,
        f"notifier-{config.id}",
    )
    configure_logging(getattr(args, "log_level", "info"))
    quiet_apprise()
    if ledger.set_aside is not None:
        log.warning(
            "state file %s could not be read; moved to %s: alerts still active are sent again",
            config.state_file,
            ledger.set_aside,
        )
    channels = sum(len(p.channels) for p in config.people)
    log.info(
        "notifier %s for %s: %d people, %d channels; state in %s",
        config.id,
        permit.event_id,
        len(config.people),
        channels,
        config.state_file,
    )
    notifier = Notifier(permit, config, address, ledger, ca_file=ca_file, witness=witness)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        notifier.request_stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        notifier.run_forever()
    finally:
        if witness is not None:
            witness.close()
    return 0
