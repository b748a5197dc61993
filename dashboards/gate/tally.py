"""The deputy's manual tally: a gate counter, the sensors' own, kept in a small JSON file.

When a gate's counter fails the deputy counts by hand with ``+`` and ``-``. To the
aggregator the tally is just another gate counter (docs/protocol.md, "Counting"): gate
``{gate}-manual``, cumulative ``in_total`` / ``out_total``, ``seq`` rising by one a
message, QoS 1. So it *is* one: :class:`ManualTally` is a
:class:`sensors.gate_counter.GateCounter` whose state file lives in
``~/.local/state/kent-ops/{event}.{gate}-manual.json``. The device code saves the totals
and the seq before each message goes out, so a tablet that reboots carries on where
it was; an unreadable file is moved aside and counting starts again at seq 1, which
the aggregator treats as a device restart and stitches. It sends through the gate
view's own MQTT connection (:class:`FeedLink`).

Unlike a beam counter the tally says nothing until it is used: no availability, no
heartbeat, until the deputy first presses a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from dashboards.common.feed import MqttFeed
from kent_ops.broker.borrowed import BorrowedLink
from kent_ops.broker.delivery import Delivery
from kent_ops.broker.tally_sends import TallySends, taps_in
from kent_ops.core.gate_view import manual_gate
from kent_ops.core.sensor_kinds import GateCount
from sensors.device import Clock, utc_now
from sensors.gate_counter import GateCounter

__all__ = [
    "DEFAULT_STATE_DIR",
    "FeedLink",
    "ManualTally",
    "TallyState",
    "manual_gate",
    "tally_path",
]

DEFAULT_STATE_DIR = Path("~/.local/state/kent-ops")
"""Where the tally is kept unless ``--state-dir`` says otherwise."""


def tally_path(state_dir: Path, event_id: str, gate: str) -> Path:
    """One file per event and gate, so one tablet can serve two events or gates."""
    return state_dir.expanduser() / f"{event_id}.{manual_gate(gate)}.json"


@dataclass(frozen=True, slots=True)
class TallyState:
    """What has been counted, the seq of the last message sent (0: none yet), and
    whether the latest totals are still to be sent (counted while the broker was away)."""

    seq: int = 0
    in_total: int = 0
    out_total: int = 0
    unsent: bool = False

    @property
    def net(self) -> int:
        return self.in_total - self.out_total

    @property
    def in_use(self) -> bool:
        """True once the deputy has counted: from then on the tally heartbeats."""
        return self.seq > 0 or self.in_total > 0 or self.out_total > 0


class ManualTally(GateCounter):
    """A gate's manual tally: the sensors' gate counter, silent until first used.

    Args:
        event_id: the event, as in the topics.
        gate: the gate the deputy stands at; the tally is gate ``{gate}-manual``.
        state_dir: where the tally file is kept (:data:`DEFAULT_STATE_DIR`).
        clock: the time stamped on each message.
        key: the tally's HMAC key when the event signs its messages.
        heartbeat_s: how often a tally in use repeats its totals.

    Raises:
        ValueError: the tally file exists but cannot be read (permissions).
    """

    def __init__(
        self,
        event_id: str,
        gate: str,
        *,
        state_dir: Path = DEFAULT_STATE_DIR,
        clock: Clock = utc_now,
        key: bytes | None = None,
        heartbeat_s: float = 30.0,
    ) -> None:
        super().__init__(
            event_id,
            manual_gate(gate),
            clock=clock,
            tz=UTC,
            key=key,
            state_file=tally_path(state_dir, event_id, gate),
            heartbeat_s=heartbeat_s,
            recover_state=True,
        )

    @property
    def state(self) -> TallyState:
        """The totals as the gate view shows them."""
        with self._lock:
            counted = self.seq > 0 or self.in_total > 0 or self.out_total > 0
            last = self.last_reading
            sent = (last.in_total, last.out_total) if isinstance(last, GateCount) else None
            unsent = counted and sent != (self.in_total, self.out_total)
            return TallyState(self.seq, self.in_total, self.out_total, unsent)

    def _link_up(self) -> None:
        """On (re)connection, repeat the totals, but only once the deputy has counted."""
        if self.state.in_use:
            super()._link_up()


class FeedLink(BorrowedLink):
    """A device link (:class:`sensors.links.Link`) over the gate view's own connection.

    It is online from the moment the view has seen the broker link come up
    (:meth:`came_up`) until it sees it go down (:meth:`went_down`), so the tally
    announces itself exactly once per connection, in order. It keeps the delivery of
    the last message sent on each topic, and follows the tally's counts to the broker
    (:attr:`sends`), so the view can say which taps are sent, and for how long the
    aggregator has not counted them.
    """

    def __init__(self, feed: MqttFeed, count_topic: str) -> None:
        super().__init__()
        self.feed = feed
        self.count_topic = count_topic
        self.sent: dict[str, Delivery] = {}
        """The last message published on each topic, with its delivery."""
        self.sends = TallySends()
        """The tally's counts on their way: which taps the broker has, since when."""

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        delivery = self.sent[topic] = self.feed.publish(topic, payload, retain=retain)
        if topic == self.count_topic:
            self.sends.add(taps_in(payload), delivery)
