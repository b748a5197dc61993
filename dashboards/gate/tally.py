"""The deputy's manual tally: a gate counter that lives in a small JSON file.

When a gate's counter fails the deputy counts by hand with ``+`` and ``-``. The tally
is just another gate counter to the aggregator (SPEC 3): gate ``{gate}-manual``,
cumulative ``in_total`` / ``out_total``, ``seq`` rising by one a message, QoS 1. The
totals and the seq are written to disk *before* each message goes out, so a tablet
that reboots carries on from where it was; the aggregator then sees the next seq with
the same or higher totals, never a drop. A lost or unreadable file starts again at
seq 1, which the aggregator treats as a device restart and stitches (SPEC 3).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kent_ops.core.wire import format_ts

__all__ = [
    "DEFAULT_STATE_DIR",
    "ManualTally",
    "TallyState",
    "manual_gate",
    "tally_path",
]

DEFAULT_STATE_DIR = Path("~/.local/state/kent-ops")
"""Where the tally is kept unless ``--state-dir`` says otherwise."""


def manual_gate(gate: str) -> str:
    """The counter id of a gate's manual tally: ``north`` → ``north-manual``."""
    return f"{gate}-manual"


def tally_path(state_dir: Path, event_id: str, gate: str) -> Path:
    """One file per event and gate, so one tablet can serve two events or gates."""
    return state_dir.expanduser() / f"{event_id}.{manual_gate(gate)}.json"


@dataclass(frozen=True, slots=True)
class TallyState:
    """What has been counted, and the seq of the last message sent (0: none yet)."""

    seq: int = 0
    in_total: int = 0
    out_total: int = 0

    @property
    def net(self) -> int:
        return self.in_total - self.out_total

    @property
    def in_use(self) -> bool:
        """True once the tally has sent a message: from then on it heartbeats."""
        return self.seq > 0


class ManualTally:
    """The tally's state on disk and the payloads it sends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.recovered_from: Path | None = None
        """Where an unreadable state file was moved aside, if one was."""
        self.state = self._load()

    def _load(self) -> TallyState:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return TallyState()
        try:
            data = json.loads(raw)
            state = TallyState(
                seq=int(data["seq"]),
                in_total=int(data["in_total"]),
                out_total=int(data["out_total"]),
            )
            if min(state.seq, state.in_total, state.out_total) < 0:
                raise ValueError("negative figures")
            return state
        except (ValueError, KeyError, TypeError):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            aside = self.path.with_name(f"{self.path.name}.unreadable-{stamp}")
            self.path.rename(aside)
            self.recovered_from = aside
            return TallyState()

    def _save(self, state: TallyState) -> None:
        """Write atomically (temp file, fsync, rename): a crash leaves old or new, not half."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(asdict(state), f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.state = state

    def count(self, now: datetime, *, persons_in: int = 0, persons_out: int = 0) -> dict[str, Any]:
        """Add persons in or out, save, and return the payload to publish."""
        if persons_in < 0 or persons_out < 0:
            raise ValueError("a tally only counts up: totals that fall are rejected (SPEC 3)")
        s = self.state
        new = TallyState(s.seq + 1, s.in_total + persons_in, s.out_total + persons_out)
        self._save(new)
        return self.payload(now)

    def heartbeat(self, now: datetime) -> dict[str, Any]:
        """The same totals with the next seq: tells the aggregator the tally is alive."""
        return self.count(now)

    def payload(self, now: datetime) -> dict[str, Any]:
        """SPEC 3's gate count for the current state, fields in the devices' order.

        Encoding (and signing, when the event signs) is the devices' own
        ``kent_ops.core.wire.encode_payload``: the tally is a device like any other.
        """
        s = self.state
        return {
            "seq": s.seq,
            "ts": format_ts(now, UTC),
            "in_total": s.in_total,
            "out_total": s.out_total,
        }
