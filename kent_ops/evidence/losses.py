"""What the log itself records was lost before it: sensors' gaps and the broker's restarts.

A log can be whole, its chain sound to the last record, and still say that messages never
reached it: a sensor's ``seq`` skipped numbers (``sensor-gap``: the broker was killed
between its saves, say) or the event's broker restarted (``broker-restarted``). ``kent-ops
verify`` says so beside its ``OK``, so that nobody reads "the log is whole" as "nothing was
lost" (docs/protocol.md, "Nothing acknowledged is lost unsaid").
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from kent_ops.core import wire
from kent_ops.evidence.records import connect_ro
from kent_ops.evidence.system import BrokerRestarted, read_system

__all__ = ["recorded_losses"]

_GAP = b'"rule":"sensor-gap"'
_RESTART = b'"event":"broker-restarted"'


def recorded_losses(path: Path) -> list[str]:
    """Each loss the log records, in words, in the order they were recorded: every gap of
    every sensor (its alert's last sentence) and every restart of the broker."""
    conn = connect_ro(path)
    try:
        rows = conn.execute(
            "SELECT kind, received_at, payload FROM records "
            "WHERE (kind = 'alert' AND instr(payload, ?) > 0) "
            "OR (kind = 'system' AND instr(payload, ?) > 0) ORDER BY id",
            (_GAP, _RESTART),
        ).fetchall()
    finally:
        conn.close()
    gaps: dict[str, str] = {}  # alert id -> its last sentence (an alert is logged each change)
    out: list[tuple[str, str]] = []
    for kind, at, payload in rows:
        if kind == "alert":
            try:
                alert = wire.decode_json(wire.Alert, payload)
            except msgspec.DecodeError:
                continue
            if alert.id not in gaps:
                out.append(("gap", alert.id))
            gaps[alert.id] = alert.message
        else:
            said = read_system(payload)
            if isinstance(said, BrokerRestarted):
                how = f" ({said.how})" if said.how else ""
                out.append(("restart", f"the event's broker restarted, recorded at {at}{how}"))
    return [gaps[key] if what == "gap" else key for what, key in out]
