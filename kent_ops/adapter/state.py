"""The adapter's state file: each device's totals, ``seq`` and last frame counter.

Written whole, atomically (a temporary file, fsync, rename, fsync of the folder), after
the broker has taken a message's translation and before the device's message is
acknowledged: a crash at any moment leaves either the old state, with the device's
message still unacknowledged (redelivered and translated again, identically), or the new
one, with the redelivery recognised by its frame counter. Nothing is counted twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kent_ops.core.devices.translate import DeviceState
from kent_ops.core.errors import UsageError

__all__ = ["DEFAULT_STATE_DIR", "StateFile"]

DEFAULT_STATE_DIR = Path("~/.local/state/kent-ops/adapt")
FORMAT_VERSION = 1


class StateFile:
    """The devices' states for one event, kept in ``{state_dir}/{event_id}.json``."""

    def __init__(self, state_dir: Path, event_id: str) -> None:
        self.path = state_dir.expanduser() / f"{event_id}.json"
        self.devices: dict[str, DeviceState] = {}

    def load(self) -> StateFile:
        """Read the file if there is one; a damaged file is a usage error, never ignored."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the state folder {self.path.parent}: {exc}") from None
        if not self.path.exists():
            return self
        try:
            data = json.loads(self.path.read_text("utf-8"))
            self.devices = {
                sensor: DeviceState.from_json(state) for sensor, state in data["devices"].items()
            }
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UsageError(
                f"the adapter's state file {self.path} cannot be read ({exc}); restore it from "
                "a backup, or move it away to start counting afresh"
            ) from None
        return self

    def get(self, sensor: str) -> DeviceState:
        return self.devices.get(sensor) or DeviceState()

    def commit(self, sensor: str, state: DeviceState) -> None:
        """Set one device's state and write the whole file atomically."""
        self.devices[sensor] = state
        data = {
            "version": FORMAT_VERSION,
            "devices": {s: st.to_json() for s, st in sorted(self.devices.items())},
        }
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
