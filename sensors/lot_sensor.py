"""A parking-lot sensor: how many cars are in the lot now.

The payload and its rules are in docs/protocol.md (Parking lot sensor).

As a library::

    lot = LotSensor("kent-summer-fest-2027", "lot-a")
    lot.connect(parse_broker_url("mqtt://broker:1883"))
    lot.arrive()                       # a car passed the entry loop
    lot.set_occupied(312)              # or a camera's full count
    lot.tick()                         # every second or so: the 30 s heartbeat

From the command line, one line per event on stdin: ``occupied 312``, ``+1``, ``-1``::

    python -m sensors.lot_sensor --permit permit.toml --id lot-a --broker mqtt://broker:1883
"""

from __future__ import annotations

import sys
from functools import partial
from typing import Any, Unpack

from kent_ops.core.sensor_kinds import LOT, LotOccupancy
from sensors.device import Device, Options, Unstamped
from sensors.device_cli import DeviceSpec

__all__ = ["LotSensor", "main", "parse_line"]


class LotSensor(Device):
    """Reports the cars in one lot, on every change and as a heartbeat.

    Like a gate counter it keeps its figure while the broker is away and publishes the
    latest one on reconnection.
    """

    kind = LOT.name

    def __init__(self, event_id: str, sensor_id: str, **options: Unpack[Options]) -> None:
        self.occupied = 0
        super().__init__(event_id, sensor_id, **options)

    def set_occupied(self, cars: int) -> bool:
        """Set the number of cars in the lot and publish it (True if sent now)."""
        if cars < 0:
            raise ValueError("a lot cannot hold fewer than 0 cars")
        with self._lock:
            self.occupied = cars
            self._save_state()
            return self._send(self._reading())

    def arrive(self, cars: int = 1) -> bool:
        """Cars drove in."""
        return self.set_occupied(self.occupied + cars)

    def leave(self, cars: int = 1) -> bool:
        """Cars drove out; a miscount never takes the lot below 0."""
        return self.set_occupied(max(0, self.occupied - cars))

    def _reading(self) -> Unstamped:
        return partial(LotOccupancy, occupied=self.occupied)

    def _state_fields(self) -> dict[str, Any]:
        return {"occupied": self.occupied}

    def _load_fields(self, data: dict[str, Any]) -> None:
        value = data.get("occupied", 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"state file {self.state_file} has a bad occupied")
        self.occupied = value


def parse_line(line: str) -> tuple[str, int]:
    """``occupied 312`` → ("set", 312); ``+1`` / ``-2`` → ("add", 1) / ("add", -2)."""
    words = line.split()
    if len(words) == 2 and words[0] == "occupied" and words[1].isdigit():
        return ("set", int(words[1]))
    if len(words) == 1 and words[0][:1] in "+-" and words[0][1:].isdigit():
        return ("add", int(words[0]))
    raise ValueError(f"expected 'occupied N', '+N' or '-N', got {line.strip()!r}")


def _handle(device: Device, line: str) -> None:
    assert isinstance(device, LotSensor)
    what, n = parse_line(line)
    if what == "set":
        device.set_occupied(n)
    elif n >= 0:
        device.arrive(n)
    else:
        device.leave(-n)


COMMAND = DeviceSpec.of(
    LOT,
    LotSensor,
    _handle,
    "A parking-lot sensor: reads 'occupied N', '+N', '-N' lines from stdin and publishes "
    "the cars in the lot (docs/protocol.md, Parking lot sensor).",
)
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
