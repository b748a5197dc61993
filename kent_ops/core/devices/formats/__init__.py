"""The device formats built in: each module reads one format and nothing else.

Every format is a function ``read(spec, topic, payload) -> Reading | Unreadable`` that
never raises. Adding a format is one module here, one line in :data:`READERS` and its
name in :data:`kent_ops.core.devices.source.FORMATS` (docs/architecture.md, "A new
device format").
"""

from __future__ import annotations

from collections.abc import Callable

from kent_ops.core.devices.formats import chirpstack_v4, json_paths, milesight_vs13x, ttn_v3
from kent_ops.core.devices.reading import Reading, Unreadable
from kent_ops.core.devices.source import SourceSpec

__all__ = ["READERS", "Reader"]

Reader = Callable[[SourceSpec, str, bytes], Reading | Unreadable]

READERS: dict[str, Reader] = {
    "ttn-v3": ttn_v3.read,
    "chirpstack-v4": chirpstack_v4.read,
    "milesight-vs13x": milesight_vs13x.read,
    "json": json_paths.read,
}
"""Each format's reader, by the name a permit's ``source`` gives."""
