"""The device formats built in: each module reads one format and nothing else.

Each module declares its :class:`~kent_ops.core.devices.reading.Format` as ``FORMAT``: its
name, its ``read(spec, topic, payload) -> Reading | Unreadable`` (which never raises)
and what else its ``source`` tables may say. Adding a format is one module here and its
``FORMAT`` in :data:`FORMATS` (docs/architecture.md, "A new device format"); the
permit's reader and the adapter take every format from there.
"""

from __future__ import annotations

from collections.abc import Callable

from kent_ops.core.devices.formats import chirpstack_v4, json_paths, milesight_vs13x, ttn_v3
from kent_ops.core.devices.reading import Format, Reading, Unreadable
from kent_ops.core.devices.spec import SourceSpec

__all__ = ["FORMATS", "READERS", "Reader"]

Reader = Callable[[SourceSpec, str, bytes], Reading | Unreadable]

FORMATS: dict[str, Format] = {
    f.name: f
    for f in (ttn_v3.FORMAT, chirpstack_v4.FORMAT, milesight_vs13x.FORMAT, json_paths.FORMAT)
}
"""Every format built in, by the name a permit's ``source`` gives, in the order the
permit's problems list them."""

READERS: dict[str, Reader] = {name: f.read for name, f in FORMATS.items()}
"""Each format's reader, by name."""
