"""A manual tally's counts on their way: which taps the broker has, and since when."""

from __future__ import annotations

from kent_ops.broker.delivery import Delivery
from kent_ops.broker.tally_sends import TallySends, taps_in


class Steady:
    """A steady clock the test moves by hand."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def acked(delivery: Delivery) -> Delivery:
    delivery.acknowledged.set()
    return delivery


def test_a_tap_is_sent_once_a_message_carrying_it_is_acknowledged() -> None:
    sends = TallySends(Steady())
    first, second = Delivery(), Delivery()
    sends.add(1, first)
    sends.add(3, second)
    assert sends.sent() == 0
    acked(second)  # the later message carries taps 1 to 3: all are with the broker
    assert sends.sent() == 3
    acked(first)
    assert sends.sent() == 3  # an older message changes nothing


def test_the_wait_is_counted_from_when_the_broker_first_had_the_oldest_uncounted_tap() -> None:
    clock = Steady()
    sends = TallySends(clock)
    sends.add(2, acked(Delivery()))
    assert sends.sent_at(1) == sends.sent_at(2) == 100.0
    clock.t = 104.0
    sends.add(5, acked(Delivery()))  # more taps; the first two still not counted
    assert sends.sent_at(3) == 104.0
    assert sends.sent_at(6) is None
    clock.t = 115.0
    assert sends.waiting_s(0) == 15.0  # taps 1 and 2 are the oldest waiting
    assert sends.waiting_s(None) == 15.0  # no status yet: nothing counted
    assert sends.waiting_s(2) == 11.0  # 1 and 2 counted: tap 3 waits since 104
    assert sends.waiting_s(5) is None  # every tap the broker has is counted
    clock.t = 200.0
    sends.add(5, acked(Delivery()))  # a heartbeat with the same totals: nothing new
    assert sends.waiting_s(4) is None
    assert sends.sent() == 5


def test_a_message_not_acknowledged_is_not_waiting_for_the_aggregator() -> None:
    clock = Steady()
    sends = TallySends(clock)
    pending = Delivery()
    sends.add(1, pending)
    clock.t = 160.0
    assert sends.waiting_s(0) is None  # the broker has nothing yet: not "not counted"
    acked(pending)
    assert sends.sent_at(1) == 160.0  # from when the acknowledgement was first seen


def test_the_taps_a_count_carries_are_its_totals() -> None:
    assert taps_in(b'{"seq": 4, "ts": "2027-07-04T14:00:00Z", "in_total": 3, "out_total": 2}') == 5
    assert taps_in(b"online") == 0
    assert taps_in(b'{"in_total": 3}') == 0


def test_a_tap_is_sent_from_the_moment_the_broker_acknowledged_it() -> None:
    """Not from when the screen next looked: the delivery keeps its acknowledgement's time."""
    sends = TallySends()
    delivery = Delivery()
    sends.add(1, delivery)
    delivery.acknowledge()
    assert delivery.acknowledged_at is not None
    assert sends.sent_at(1) == delivery.acknowledged_at
