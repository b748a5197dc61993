"""One device message into the kent-ops payload of the sensor it stands for.

Pure and deterministic: the same state and the same message give the same readings,
so a message the adapter translated but could not acknowledge before a crash is
translated again, identically, after the restart (same ``seq``: the aggregator's
duplicate), and one it had acknowledged is recognised by its frame counter.

A gate's payload carries cumulative ``in_total``/``out_total`` for the current run,
with the next ``seq``. When the device restarts (its frame counter or sequence falls to
0 or 1, or, without one, its totals fall) the adapter starts a new run the way a
kent-ops counter does (docs/protocol.md, "Rented devices"): a payload with ``seq`` 0 and
totals 0, which the aggregator stitches and records as a ``counter-reset``, then the
device's figures since its restart at ``seq`` 1. The totals therefore go on.

A translation is the sensor kind's own Struct (:mod:`kent_ops.core.sensor_kinds.payloads`),
published through the wire's encoder, so the adapter sends exactly what a native
device of that kind would.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

from kent_ops.core.devices.reading import Reading, Unreadable
from kent_ops.core.devices.spec import SourceSpec
from kent_ops.core.sensor_kinds import GateCount, LotOccupancy
from kent_ops.core.timeutil import from_us, to_us
from kent_ops.core.wire.adapter import REDELIVERY

__all__ = ["DeviceState", "Translated", "Translation", "translate"]

Translated = GateCount | LotOccupancy
"""What a rented device's message becomes: the reading of the kind it stands for."""

RECENT_KEPT = 8
"""Digests of the last messages kept, to know a broker's redelivery without a counter."""


@dataclass(slots=True)
class DeviceState:
    """What the adapter remembers of one device between messages (and restarts)."""

    seq: int = 0
    """The last ``seq`` published; 0 before the first."""
    run_in: int = 0
    run_out: int = 0
    """The totals published in the current run (a gate)."""
    dev_in: int | None = None
    dev_out: int | None = None
    """The device's own last totals (a gate that reports totals)."""
    counter: int | None = None
    """The device's last frame counter or sequence."""
    last_ts: int | None = None
    """The last payload's time (microseconds): a payload's time never goes back."""
    restarts: int = 0
    recent: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DeviceState:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        state = cls(**known)
        state.recent = list(state.recent)
        return state


class Translation(NamedTuple):
    """What to publish for one device message, and the state once it is published."""

    payloads: tuple[Translated, ...]
    """The readings to publish, in order (a restart's ``seq`` 0 first)."""
    translated: Translated | None
    """The reading that carries this message's figures (the raw record names it)."""
    reason: str | None
    """Why nothing was translated: a redelivery, or what could not be read."""
    state: DeviceState


def translate(
    spec: SourceSpec,
    capacity: int,
    state: DeviceState,
    reading: Reading | Unreadable,
    received: datetime,
    *,
    digest: str,
    redelivered: bool = False,
) -> Translation:
    """The payloads for one message; ``state`` is left untouched (the result has the new one).

    Args:
        spec: the sensor's source.
        capacity: the lot's capacity (``free`` is read as capacity − free); 0 for a gate.
        state: the device's state before this message.
        reading: what the format read, or why it could not.
        received: when the adapter received the message.
        digest: a digest of the message's bytes, to recognise a redelivery without a counter.
        redelivered: the broker marked the message as a redelivery (MQTT DUP).
    """
    if isinstance(reading, Unreadable):
        return Translation((), None, reading.reason, state)
    new = replace(state, recent=[*state.recent[-(RECENT_KEPT - 1) :], digest])
    restart = False
    if reading.counter is not None and state.counter is not None:
        if reading.counter == state.counter:
            return _repeat(state, f"frame counter {reading.counter} was already translated")
        restart = reading.counter <= 1 and reading.counter < state.counter
        if not restart and reading.counter < state.counter:
            return _repeat(state, f"frame counter {reading.counter} is older than {state.counter}")
    elif reading.counter is None and redelivered and digest in state.recent:
        return _repeat(state, "the broker delivered the same message again")
    new.counter = reading.counter
    t = to_us(reading.ts if reading.ts is not None else received)
    if state.last_ts is not None and t < state.last_ts:
        t = state.last_ts
    new.last_ts = t
    ts = from_us(t - t % 1000)  # the milliseconds the payload carries (wire.format_ts)
    if spec.kind == "lot":
        return _lot(capacity, new, reading, ts)
    return _gate(new, reading, ts, restart)


def _repeat(state: DeviceState, why: str) -> Translation:
    return Translation((), None, f"{REDELIVERY}: {why}", state)


def _lot(capacity: int, new: DeviceState, reading: Reading, ts: datetime) -> Translation:
    if reading.occupied is not None:
        occupied = reading.occupied
    else:
        assert reading.free is not None
        if reading.free > capacity:
            return Translation(
                (), None, f"free {reading.free} is more than the lot's capacity {capacity}", new
            )
        occupied = capacity - reading.free
    new.seq += 1
    payload = LotOccupancy(seq=new.seq, ts=ts, occupied=occupied)
    return Translation((payload,), payload, None, new)


def _gate(new: DeviceState, reading: Reading, ts: datetime, restart: bool) -> Translation:
    assert reading.in_ is not None
    assert reading.out is not None
    if reading.deltas:
        d_in, d_out = reading.in_, reading.out
    elif new.dev_in is None or new.dev_out is None:
        d_in, d_out = reading.in_, reading.out  # the device's first totals, since its start
    else:
        fell = reading.in_ < new.dev_in or reading.out < new.dev_out
        if fell and not restart and reading.counter is not None:
            return Translation(
                (),
                None,
                f"totals fell without a restart (in {new.dev_in:,}→{reading.in_:,}, "
                f"out {new.dev_out:,}→{reading.out:,} at frame {reading.counter})",
                new,
            )
        restart = restart or fell
        if fell:
            d_in, d_out = reading.in_, reading.out  # counted since the device restarted
        else:
            d_in, d_out = reading.in_ - new.dev_in, reading.out - new.dev_out
    if not reading.deltas:
        new.dev_in, new.dev_out = reading.in_, reading.out
    payloads: list[Translated] = []
    if restart:
        new.restarts += 1
        if new.seq > 0 and (new.run_in or new.run_out):
            payloads.append(GateCount(seq=0, ts=ts, in_total=0, out_total=0))
            new.seq, new.run_in, new.run_out = 0, 0, 0
    new.seq += 1
    new.run_in += d_in
    new.run_out += d_out
    payload = GateCount(seq=new.seq, ts=ts, in_total=new.run_in, out_total=new.run_out)
    payloads.append(payload)
    return Translation(tuple(payloads), payload, None, new)
