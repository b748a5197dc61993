"""The event-day generator: a permit and a scenario in, timed sensor messages out.

:func:`generate` is pure: no broker, no clock, no files beyond reading the scenario. The
same permit, scenario and seed always give the same messages, byte for byte, in the
same order. The simulator paces them against the wall clock and publishes them; tests,
the replay benchmark and report tests feed them straight to the engine.

The messages come from the real device classes (:class:`~sensors.gate_counter.GateCounter`
and friends) driven on a simulated clock through in-memory links, so a simulated day
exercises exactly what a field device sends: availability, ``seq``, heartbeats, the
coalesced catch-up after an outage. Faults are layered on top: a counter that loses its
state, a gate counter that drops off the broker (its will says ``offline``), duplicated
redeliveries and malformed messages.

How it works, per scenario step (``step_s``, 5 s by default): the crowd model draws
arrivals (Poisson, at each phase's rate) and departures (each person present leaves
at the phase's hazard), spread over the gates by weight; cars park ``lead`` ahead of
their passengers, one per ``persons_per_car``, into the lot with most free spaces by
chance, and leave ``exit_lag`` after them; then every gate counter and lot sensor
publishes if its figure changed, or heartbeats when ``heartbeat_s`` has passed. Staff
badge on and off at their shift times. Each device acts at its own fixed point inside
the step, so no two devices share a timestamp.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics, encode_payload, format_ts, keys_for_permit
from sensors.badge_reader import BadgeReader
from sensors.device import Device, MemoryLink, Sent
from sensors.gate_counter import GateCounter
from sensors.lot_sensor import LotSensor
from sensors.scenario_file import Scenario, load_scenario
from sensors.tally import Tally, expected_totals

__all__ = [
    "SimMessage",
    "Tally",
    "Timeline",
    "expected_totals",
    "generate",
    "timeline",
]

BADGE_PREFIX = {"doctor": "MD", "nurse": "RN", "security": "SEC"}


@dataclass(frozen=True, slots=True)
class SimMessage:
    """One message as a sensor would publish it, at a simulated (timezone-aware) time.

    ``fault`` names the injected fault a message belongs to (``restart``, ``offline``,
    ``reconnect`` (the end of an outage), ``duplicate``, ``bad-json``, ``negative-count``,
    ``wrong-type``, ``unknown-sensor``, ``oversize``), or is None for ordinary traffic.
    Publishers ignore it; tests use it.
    """

    at: datetime
    topic: str
    payload: bytes
    retain: bool
    fault: str | None = None


@dataclass(frozen=True, slots=True)
class Timeline:
    """Where a run sits in time: setup ``begin``, the scenario's 0:00 ``zero``, its ``end``."""

    begin: datetime
    zero: datetime
    end: datetime
    span_s: float

    def at(self, offset_s: float) -> datetime:
        return self.zero + timedelta(seconds=offset_s)


def timeline(permit: Permit, scenario: Scenario, start: datetime | None = None) -> Timeline:
    """The run's bounds: 0:00 is ``start`` (default: the first window opens)."""
    window = permit.windows[0]
    zero = start if start is not None else window.start
    if zero.tzinfo is None:
        raise ValueError("start must be timezone-aware")
    window_s = (window.end - window.start).total_seconds()
    span_s = window_s if scenario.span is None else scenario.span.seconds(window_s, permit)
    if span_s <= 0:
        raise ValueError(f"scenario {scenario.name!r} has a span of {span_s:g} s")
    setup_s = max(0.0, scenario.setup.seconds(span_s, permit))
    return Timeline(
        begin=zero - timedelta(seconds=setup_s),
        zero=zero,
        end=zero + timedelta(seconds=span_s),
        span_s=span_s,
    )


def generate(
    permit: Permit,
    scenario: Scenario | str | Path,
    seed: int = 1,
    start: datetime | None = None,
    *,
    duration: float | None = None,
    keys: Mapping[str, bytes] | None = None,
) -> Iterator[SimMessage]:
    """Yield a simulated event's sensor messages in time order; deterministic per seed.

    Args:
        permit: gives the gates, lots, staff stations, limits and time zone.
        scenario: a :class:`Scenario`, a built-in name or a scenario file's path.
        seed: the same seed gives the same messages.
        start: the scenario's 0:00 (default: when the permit's first window opens);
            setup (devices online, the first staff) comes ``setup`` before it.
        duration: stop this many simulated seconds after the first message.
        keys: HMAC keys by sensor id, for signed payloads; default: the permit's
            ``[signing]`` keys file if it names one (pass ``{}`` for unsigned payloads).
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if keys is None:
        keys = keys_for_permit(permit.signing_keys_file) or {}
    return _Run(permit, scenario, seed, start, duration, keys).messages()


class _Run:
    """One generation: the crowd computed up front, messages emitted lazily by step."""

    def __init__(
        self,
        permit: Permit,
        scenario: Scenario,
        seed: int,
        start: datetime | None,
        duration: float | None,
        keys: Mapping[str, bytes],
    ) -> None:
        self.permit = permit
        self.sc = scenario
        self.seed = seed
        self.tl = timeline(permit, scenario, start)
        self.keys = keys
        self.step = scenario.step_s
        self.setup_s = (self.tl.zero - self.tl.begin).total_seconds()
        run_s = self.setup_s + self.tl.span_s
        if duration is not None:
            run_s = min(run_s, duration)
        self.stop_at = self.tl.begin + timedelta(seconds=run_s)
        # Steps cover the whole scenario even when the run is cut short, so the crowd
        # (and everything downstream of it) does not depend on the duration.
        self.n_steps = math.ceil((self.setup_s + self.tl.span_s) / self.step)
        self.gates = list(permit.gates)
        self.lots = [lot for lot, cap in permit.lots.items() if cap > 0]
        self.now = self.tl.begin
        self.devices: dict[str, Device] = {}
        self.links: dict[str, MemoryLink] = {}
        self.last_count: dict[str, Sent] = {}
        self.extra: list[SimMessage] = []
        self.fault_tag: str | None = None

    # -- time ----------------------------------------------------------------------------

    def offset(self, k: int) -> float:
        """Seconds after 0:00 at which step ``k`` begins (negative during setup)."""
        return k * self.step - self.setup_s

    def secs(self, expr: object) -> float:
        return expr.seconds(self.tl.span_s, self.permit)  # type: ignore[attr-defined]

    def step_of(self, offset_s: float) -> int:
        return math.floor((offset_s + self.setup_s) / self.step)

    def rng(self, purpose: str) -> random.Random:
        return random.Random(f"kent-ops:{self.seed}:{self.sc.name}:{purpose}")

    # -- the crowd -----------------------------------------------------------------------

    def gate_weights(self) -> list[float]:
        auto = [g for g in self.gates if g not in self.permit.manual_gates]
        explicit = self.sc.gate_weights
        auto_w = sum(explicit.get(g, 1.0) for g in auto)
        n_manual = len(self.gates) - len(auto)
        share = self.sc.manual_share
        manual_w = share * auto_w / (1 - share * n_manual) if auto_w and n_manual else 1.0
        return [
            explicit.get(g, manual_w if g in self.permit.manual_gates else 1.0) for g in self.gates
        ]

    def crowd(self) -> tuple[list[list[int]], list[list[int]]]:
        """Persons in and out per step and gate, following phases and the surge."""
        rng = self.rng("crowd")
        n, step, unit = self.n_steps, self.step, self.sc.unit(self.permit)
        weights = self.gate_weights()
        ins = [[0] * len(self.gates) for _ in range(n)]
        outs = [[0] * len(self.gates) for _ in range(n)]
        if not self.gates or not any(weights):
            return ins, outs
        phases = [
            (self.secs(p.start), self.secs(p.end), p)
            for p in self.sc.phases
            if self.secs(p.end) > self.secs(p.start)
        ]
        surge = self.sc.surge
        s_at = s_ramp_end = s_hold_end = math.inf
        target = 0
        if surge is not None:
            s_at = self.secs(surge.at)
            s_ramp_end = s_at + max(self.secs(surge.ramp), step)
            s_hold_end = s_ramp_end + max(0.0, self.secs(surge.hold))
            target = math.ceil(surge.peak * unit)
        surge_owed: int | None = None
        present = 0
        for k in range(n):
            t = self.offset(k)
            arrived = left = 0
            if s_at <= t < s_ramp_end:
                if surge_owed is None:
                    surge_owed = max(0, target - present)
                steps_left = max(1, math.ceil((s_ramp_end - t) / step))
                arrived = math.ceil(surge_owed / steps_left)
                surge_owed -= arrived
            else:
                active = [p for a, b, p in phases if a <= t < b]
                lam = sum(p.arrive * unit * step / (b - a) for a, b, p in phases if a <= t < b)
                draining = [(b, p) for a, b, p in phases if a <= t < b and p.empty]
                if draining:
                    end = min(b for b, _ in draining)
                    left = math.ceil(present / max(1, math.ceil((end - t) / step)))
                else:
                    hazard = sum(p.leave_per_hour for p in active)
                    left = _binomial(rng, present, 1 - math.exp(-hazard * step / 3600))
                if s_ramp_end <= t < s_hold_end:
                    # A sold-out crowd holds: one comes in for each one who leaves, at the
                    # same gate, so no counter's message ever shows more than the peak.
                    for g in _spread(rng, left, weights):
                        ins[k][g] += 1
                        outs[k][g] += 1
                    continue
                arrived = _poisson(rng, lam)
            present += arrived - left
            for g in _spread(rng, arrived, weights):
                ins[k][g] += 1
            for g in _spread(rng, left, weights):
                outs[k][g] += 1
        return ins, outs

    def cars(self, ins: list[list[int]], outs: list[list[int]]) -> list[list[int]]:
        """Cars in each lot after each step (arrivals ``lead`` early, exits ``exit_lag`` late)."""
        n, lots = self.n_steps, self.lots
        occupied = [[0] * len(lots) for _ in range(n)]
        if not lots:
            return occupied
        rng = self.rng("parking")
        pk = self.sc.parking
        lead = round(self.secs(pk.lead) / self.step)
        lag = round(self.secs(pk.exit_lag) / self.step)
        cars_in = [0] * n
        cars_out = [0] * n
        cum_in = cum_out = 0
        for k in range(n):
            before_in, before_out = cum_in, cum_out
            cum_in += sum(ins[k])
            cum_out += sum(outs[k])
            new = math.floor(cum_in / pk.persons_per_car) - math.floor(
                before_in / pk.persons_per_car
            )
            gone = math.floor(cum_out / pk.persons_per_car) - math.floor(
                before_out / pk.persons_per_car
            )
            cars_in[max(0, k - lead)] += new
            if k + lag < n:
                cars_out[k + lag] += gone
        caps = [self.permit.lots[lot] for lot in lots]
        now = [0] * len(lots)
        around = 0  # cars that came, parked or turned away, and have not left yet
        for k in range(n):
            for _ in range(cars_in[k]):
                around += 1
                free = [c - o for c, o in zip(caps, now, strict=True)]
                if sum(free) > 0:  # else every lot is full and the car parks elsewhere
                    now[rng.choices(range(len(lots)), weights=free)[0]] += 1
            for _ in range(cars_out[k]):
                parked = sum(now)
                if around <= 0:
                    break
                # The leaving car is one of those in a lot, or one that found none.
                if parked and rng.random() * around < parked:
                    now[rng.choices(range(len(lots)), weights=now)[0]] -= 1
                around -= 1
            occupied[k] = list(now)
        return occupied

    # -- scheduled events ----------------------------------------------------------------

    def staff_events(self) -> list[tuple[float, int, Callable[[], None]]]:
        """Badge scans as (offset, order, action)."""
        stations = list(self.permit.staff_stations)
        if not stations:
            return []
        rng = self.rng("staff")
        numbers = dict.fromkeys(BADGE_PREFIX, 0)
        events: list[tuple[float, int, Callable[[], None]]] = []
        for i, shift in enumerate(self.sc.shifts):
            station = _pick(stations, shift.station, default=i)
            if station is None:
                continue
            spread = max(0.0, self.secs(shift.spread))
            on = self.secs(shift.on)
            off = self.secs(shift.off) if shift.off is not None else None
            for _ in range(shift.headcount(self.permit)):
                numbers[shift.role] += 1
                badge = f"{BADGE_PREFIX[shift.role]}-{numbers[shift.role]:04d}"
                t_on = max(-self.setup_s, on + rng.uniform(0, spread))
                events.append((t_on, len(events), self._scan(station, badge, shift.role, "on")))
                if off is not None:
                    t_off = max(t_on, off + rng.uniform(0, spread))
                    events.append(
                        (t_off, len(events), self._scan(station, badge, shift.role, "off"))
                    )
        return events

    def _scan(self, station: str, badge: str, role: str, action: str) -> Callable[[], None]:
        def act() -> None:
            reader = self.devices[station]
            assert isinstance(reader, BadgeReader)
            reader.scan(badge, role, action)

        return act

    def fault_events(self) -> list[tuple[float, int, Callable[[], None]]]:
        auto = [g for g in self.gates if g not in self.permit.manual_gates] or self.gates
        events: list[tuple[float, int, Callable[[], None]]] = []
        for i, fault in enumerate(self.sc.faults):
            gate = _pick(auto, fault.gate, default=0)
            if gate is None or gate not in self.gates:
                continue
            t = self.secs(fault.at)
            order = 1_000_000 + i * 1000
            if fault.kind == "restart":
                events.append((t, order, self._restart(gate)))
            elif fault.kind == "offline":
                back = t + max(self.step, self.secs(fault.duration)) if fault.duration else t
                events.append((t, order, self._link(gate, False)))
                events.append((back, order + 1, self._link(gate, True)))
            elif fault.kind == "duplicates":
                for c in range(fault.copies):
                    events.append((t + c * 0.05, order + c, self._duplicate(gate)))
            else:
                for j, what in enumerate(fault.what):
                    events.append((t + j, order + j, self._malformed(gate, what)))
        return events

    def _restart(self, gate: str) -> Callable[[], None]:
        def act() -> None:
            self.fault_tag = "restart"
            counter = self.devices[gate]
            assert isinstance(counter, GateCounter)
            counter.power_cycle()
            link = self.links[gate]
            link.set_online(False, will=False)  # back before the broker misses it
            link.set_online(True)

        return act

    def _link(self, gate: str, online: bool) -> Callable[[], None]:
        def act() -> None:
            self.fault_tag = "reconnect" if online else "offline"
            self.links[gate].set_online(online)

        return act

    def _duplicate(self, gate: str) -> Callable[[], None]:
        def act() -> None:
            last = self.last_count.get(gate)
            if last is not None and self.links[gate].online:
                self.extra.append(
                    SimMessage(self.now, last.topic, last.payload, last.retain, "duplicate")
                )

        return act

    def _malformed(self, gate: str, what: str) -> Callable[[], None]:
        def act() -> None:
            counter = self.devices[gate]
            assert isinstance(counter, GateCounter)
            topics = Topics(self.permit.event_id)
            ts = format_ts(self.now, self.permit.timezone)
            good: dict[str, object] = {
                "seq": counter.seq + 1,
                "ts": ts,
                "in_total": counter.in_total,
                "out_total": counter.out_total,
            }
            topic = topics.gate_count(gate)
            if what == "bad-json":
                payload = encode_payload(good)[:-9]
            elif what == "negative-count":
                payload = encode_payload({**good, "in_total": -5})
            elif what == "wrong-type":
                payload = encode_payload({**good, "in_total": str(counter.in_total)})
            elif what == "oversize":
                payload = encode_payload({**good, "pad": "x" * (70 * 1024)})
            else:
                topic = topics.gate_count(self._unknown_gate())
                payload = encode_payload({"seq": 1, "ts": ts, "in_total": 12, "out_total": 0})
            self.extra.append(SimMessage(self.now, topic, payload, False, what))

        return act

    def _unknown_gate(self) -> str:
        name = "unlisted-gate"
        while name in self.permit.sensors:
            name += "-x"
        return name

    # -- emitting ------------------------------------------------------------------------

    def _clock(self) -> datetime:
        return self.now

    def messages(self) -> Iterator[SimMessage]:
        ins, outs = self.crowd()
        occupied = self.cars(ins, outs)
        ev, tz, hb = self.permit.event_id, self.permit.timezone, self.sc.heartbeat_s
        for g in self.gates:
            self.devices[g] = GateCounter(
                ev, g, clock=self._clock, tz=tz, key=self.keys.get(g), heartbeat_s=hb
            )
        for lot in self.lots:
            self.devices[lot] = LotSensor(
                ev, lot, clock=self._clock, tz=tz, key=self.keys.get(lot), heartbeat_s=hb
            )
        for s in self.permit.staff_stations:
            self.devices[s] = BadgeReader(ev, s, clock=self._clock, tz=tz, key=self.keys.get(s))
        order = list(self.devices)
        for sid, dev in self.devices.items():
            self.links[sid] = MemoryLink(will_topic=dev.availability_topic, _online=False)

        scheduled = self.staff_events() + self.fault_events()
        heapq.heapify(scheduled)
        # Each periodic device acts at its own point inside the step.
        periodic = [sid for sid in order if sid in self.gates or sid in self.lots]
        slot = {sid: (i + 1) * self.step / (len(periodic) + 2) for i, sid in enumerate(periodic)}

        first = True
        for k in range(self.n_steps):
            t0 = self.offset(k)
            actions: list[tuple[float, int, Callable[[], None]]] = []
            if first:  # devices come online at their own point in the step, too
                for i, sid in enumerate(order):
                    actions.append((t0 + slot.get(sid, 0.0), -len(order) + i, self._attach(sid)))
                first = False
            for i, sid in enumerate(periodic):
                actions.append((t0 + slot[sid], i, self._periodic(sid, k, ins, outs, occupied)))
            while scheduled and scheduled[0][0] < t0 + self.step:
                t, n, act = heapq.heappop(scheduled)
                actions.append((max(t, t0), n, act))  # nothing happens before setup
            actions.sort(key=lambda a: (a[0], a[1]))
            for t, _, act in actions:
                at = self.tl.zero + timedelta(milliseconds=round(t * 1000))
                if at >= self.stop_at or at >= self.tl.end:
                    return
                self.now = at
                self.fault_tag = None
                act()
                yield from self._collect(at)

    def _attach(self, sid: str) -> Callable[[], None]:
        def act() -> None:
            link = self.links[sid]
            self.devices[sid].attach(link)
            link.set_online(True)

        return act

    def _periodic(
        self,
        sid: str,
        k: int,
        ins: list[list[int]],
        outs: list[list[int]],
        occupied: list[list[int]],
    ) -> Callable[[], None]:
        def act() -> None:
            device = self.devices[sid]
            if isinstance(device, GateCounter):
                g = self.gates.index(sid)
                if ins[k][g] or outs[k][g]:
                    device.count(ins[k][g], outs[k][g])
                else:
                    device.tick()
            elif isinstance(device, LotSensor):
                cars = occupied[k][self.lots.index(sid)]
                if cars != device.occupied:
                    device.set_occupied(cars)
                else:
                    device.tick()

        return act

    def _collect(self, at: datetime) -> Iterator[SimMessage]:
        tag = self.fault_tag
        for sid, link in self.links.items():
            for sent in link.drain():
                if sid in self.gates and sent.topic.endswith("/count"):
                    self.last_count[sid] = sent
                yield SimMessage(at, sent.topic, sent.payload, sent.retain, tag)
        extra, self.extra = self.extra, []
        yield from extra


def _pick(items: list[str], which: str | int | None, *, default: int) -> str | None:
    """An item by id, or by 1-based number (wrapping), or the default'th (wrapping)."""
    if not items:
        return None
    if isinstance(which, str):
        return which if which in items else None
    index = (which - 1) if isinstance(which, int) else default
    return items[index % len(items)]


def _spread(rng: random.Random, n: int, weights: list[float]) -> list[int]:
    """``n`` persons each sent to a gate index at random, by weight."""
    if n <= 0:
        return []
    return rng.choices(range(len(weights)), weights=weights, k=n)


def _poisson(rng: random.Random, lam: float) -> int:
    """A Poisson draw; exact for small means, normal approximation for large ones."""
    if lam <= 0:
        return 0
    if lam < 30:
        limit, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= rng.random()
            if p <= limit:
                return k
            k += 1
    return max(0, round(rng.gauss(lam, math.sqrt(lam))))


def _binomial(rng: random.Random, n: int, p: float) -> int:
    """A binomial draw; exact for few trials, approximated for many."""
    if n <= 0 or p <= 0:
        return 0
    if p >= 1:
        return n
    if n < 50:
        return sum(1 for _ in range(n) if rng.random() < p)
    mean = n * p
    if mean < 30:
        return min(n, _poisson(rng, mean))
    return min(n, max(0, round(rng.gauss(mean, math.sqrt(mean * (1 - p))))))
