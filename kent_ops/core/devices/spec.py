"""What the permit says of one rented device: a ``source`` table, once read.

Its own module so that the formats (:mod:`kent_ops.core.devices.formats`) and the
permit's reader of ``source`` tables (:mod:`kent_ops.core.devices.source`), which lists
the formats, can both name it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SourceSpec"]


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """How one sensor's rented device is read; paths are dotted field names."""

    sensor: str
    kind: str
    """The kind it stands for (a rentable one in core/sensor_kinds/table.py: ``gate`` or ``lot``):
    the kent-ops payload the device's messages become."""
    format: str
    topic: str | None
    """The device's own MQTT topic (a filter: ``+`` allowed); None for an HTTP device."""
    http: bool = False
    """The device posts its messages over HTTPS to ``kent-ops adapt`` instead."""
    in_: str | None = None
    out: str | None = None
    in_delta: str | None = None
    out_delta: str | None = None
    occupied: str | None = None
    free: str | None = None
    ts: str | None = None
    seq: str | None = None
    line: int | None = None
    stale_after_s: float | None = None

    @property
    def deltas(self) -> bool:
        """The gate's counts arrive as the persons since the last message, not totals."""
        return self.in_delta is not None
