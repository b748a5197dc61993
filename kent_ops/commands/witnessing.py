"""``--witness FILE`` for the commands that receive checkpoints: dashboard, gate, notify.

Each keeps every checkpoint of the evidence log it receives in a witness file
(:mod:`kent_ops.broker.witness`), by default in its state folder, one file an event. A
file named with ``--witness`` that cannot be written is refused (exit 2, one sentence);
the default one only warns, on stderr: a view that cannot keep a witness must still
show the figures.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kent_ops.broker.witness import WitnessError, WitnessKeeper

__all__ = ["open_witness"]


def open_witness(given: str | None, default: Path, event_id: str, by: str) -> WitnessKeeper | None:
    """The keeper of ``given`` (refused if unwritable), else of ``default`` (or None, said).

    Raises:
        WitnessError: ``given`` cannot be written.
    """
    if given:
        return WitnessKeeper(Path(given), event_id, by).open()
    try:
        return WitnessKeeper(default, event_id, by).open()
    except WitnessError as exc:
        sys.stderr.write(
            f"kent-ops: warning: {exc}; the checkpoints received are not kept as a witness "
            "(give --witness FILE)\n"
        )
        return None
