"""When a kent-ops broker in the field writes what it holds to disk: what a SIGKILL can lose.

Mosquitto keeps what it holds for a persistent session (for the aggregator while
systemd restarts it, for a property's bridge while its link is down) in memory, and
now and then writes its whole database to disk: every retained message, every
session, every message held, then an fsync. Its one thread does nothing else
meanwhile. A SIGKILL, the OOM killer or a power cut loses what it acknowledged since
its last save; the devices have let go of those messages.

``autosave_interval N`` alone saves every N seconds: a window measured in time, so
the busier the event the more it holds unsaved (at a festival's 35 messages a second,
up to 11 s of them with the 10 s shipped before: 380 messages), and a save every N
seconds even when nothing changed. With ``autosave_on_changes true`` the broker saves
after N *changes*: a message queued for an absent subscriber, a message a subscriber
acknowledged, a retained message, a subscription, a persistent session connecting.
It checks after each turn of its loop, so at most N - 1 acknowledged messages are ever
unsaved, however busy the event (a few more if the kill falls in the middle of a
save), and a broker with nothing new writes nothing.

Every kent-ops broker in the field saves every :data:`AUTOSAVE_CHANGES` changes: the
command post's (``deploy/mosquitto/kent-ops-field.conf``, ``kent-ops.conf``) and a
property's (``kent-ops deploy bridge``). Why 20, as measured by
benchmarks/broker_window.py (docs/security.md, "The field broker's window"): a save
costs little while little is held, and grows with what is held; with the aggregator
down half an hour at a festival's rate the broker spends about a tenth of its time
saving at 20. Fewer changes between saves would lose fewer messages but cost
proportionally more, while the aggregator is down, which is when the broker's copy is
the only one.
"""

from __future__ import annotations

__all__ = ["AUTOSAVE_CHANGES", "FIELD_AUTOSAVE", "autosave_lines"]

AUTOSAVE_CHANGES = 20
"""Changes between two saves: a SIGKILL loses at most one fewer acknowledged messages."""


def autosave_lines(changes: int = AUTOSAVE_CHANGES) -> list[str]:
    """The configuration lines that make Mosquitto save every ``changes`` changes."""
    return ["autosave_on_changes true", f"autosave_interval {changes}"]


FIELD_AUTOSAVE = "".join(f"{line}\n" for line in autosave_lines())
"""The field brokers' autosave lines, as text for a configuration file."""
