"""A gate counter: cumulative persons in and out since the device started.

The payload and its rules are in docs/protocol.md (Gate counter, Counting).

As a library (a Raspberry Pi's GPIO callback, or the simulator)::

    counter = GateCounter("kent-summer-fest-2027", "north", state_file="north.json")
    counter.connect(parse_broker_url("mqtt://broker:1883"))
    counter.count(entered=1)          # from the beam sensor's callback
    counter.tick()                    # call every second or so: the 30 s heartbeat

From the command line, one input line per event on stdin (``in``, ``out``, ``in 3``,
``out 2``)::

    python -m sensors.gate_counter --permit permit.toml --id north \\
        --broker mqtt://broker:1883 --state /var/lib/kent/north.json
"""

from __future__ import annotations

import sys
from functools import partial
from typing import Any, Unpack

from kent_ops.core.sensor_kinds import GATE, GateCount
from sensors.device import Device, Options, Unstamped
from sensors.device_cli import DeviceSpec

__all__ = ["GateCounter", "main", "parse_line"]


class GateCounter(Device):
    """Counts persons in and out; publishes its cumulative totals with a rising ``seq``.

    Totals and ``seq`` survive a reboot through ``state_file``. While the broker is
    away it keeps counting, and on reconnection publishes the latest totals once.
    """

    kind = GATE.name

    def __init__(self, event_id: str, sensor_id: str, **options: Unpack[Options]) -> None:
        self.in_total = 0
        self.out_total = 0
        super().__init__(event_id, sensor_id, **options)

    def count(self, entered: int = 0, exited: int = 0) -> bool:
        """Add persons who went in and out, then publish the totals (True if sent now)."""
        if entered < 0 or exited < 0:
            raise ValueError("counts must not be negative")
        with self._lock:
            self.in_total += entered
            self.out_total += exited
            self._save_state()
            return self._send(self._reading())

    def power_cycle(self) -> None:
        """Lose all state, as a device without a state file does when it reboots.

        The next message then has ``seq`` 1 and totals counted since the reboot: the
        aggregator recognises a restart and stitches the totals (the simulator's fault).
        """
        with self._lock:
            self.seq = 0
            self.in_total = 0
            self.out_total = 0
            self._last_sent_at = None
            self._save_state()

    def _reading(self) -> Unstamped:
        return partial(GateCount, in_total=self.in_total, out_total=self.out_total)

    def _state_fields(self) -> dict[str, Any]:
        return {"in_total": self.in_total, "out_total": self.out_total}

    def _load_fields(self, data: dict[str, Any]) -> None:
        for name in ("in_total", "out_total"):
            value = data.get(name, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"state file {self.state_file} has a bad {name}")
            setattr(self, name, value)


def parse_line(line: str) -> tuple[int, int]:
    """``in``, ``out``, ``in 3``, ``out 2`` → (entered, exited); raise ValueError."""
    words = line.split()
    if not words or words[0] not in ("in", "out") or len(words) > 2:
        raise ValueError(f"expected 'in [N]' or 'out [N]', got {line.strip()!r}")
    n = 1
    if len(words) == 2:
        if not words[1].isdigit():
            raise ValueError(f"count {words[1]!r} is not a whole number")
        n = int(words[1])
    return (n, 0) if words[0] == "in" else (0, n)


def _handle(device: Device, line: str) -> None:
    assert isinstance(device, GateCounter)
    entered, exited = parse_line(line)
    device.count(entered, exited)


COMMAND = DeviceSpec.of(
    GATE,
    GateCounter,
    _handle,
    "A gate counter: reads 'in', 'out', 'in 3', 'out 2' lines from stdin and publishes "
    "cumulative totals (docs/protocol.md, Gate counter).",
)
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
