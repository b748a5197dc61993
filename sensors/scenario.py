"""The event-day generator: a permit and a scenario in, timed sensor messages out.

:func:`generate` is pure: no broker, no clock, no files beyond reading the scenario. The
same permit, scenario and seed always give the same messages, byte for byte, in the
same order. The simulator paces them against the wall clock and publishes them; tests,
the replay benchmark and report tests feed them straight to the engine.

The parts: :mod:`sensors.schedule` cuts the run into steps (``step_s``, 5 s by
default); :mod:`sensors.crowd` computes, up front, the persons through each gate and
the cars in each lot per step; :mod:`sensors.scenario_events` schedules the staff's
badge scans and the injected faults; :mod:`sensors.floor` holds the real device classes
on in-memory links. This module assembles the messages: per step, every gate counter
and lot sensor publishes if its figure changed, or heartbeats when ``heartbeat_s`` has
passed, and the scheduled events due in the step happen. Each device acts at its own
fixed point inside the step, so no two devices share a timestamp.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path

from kent_ops.core.permit import Permit
from kent_ops.core.wire import keys_for_permit
from sensors.crowd import Flows, cars_parked, persons
from sensors.floor import Floor, SimMessage
from sensors.gate_counter import GateCounter
from sensors.lot_sensor import LotSensor
from sensors.scenario_events import Action, Event, fault_events, staff_events
from sensors.scenario_file import Scenario, load_scenario
from sensors.schedule import Schedule, Timeline, timeline
from sensors.tally import Tally, expected_totals

__all__ = [
    "SimMessage",
    "Tally",
    "Timeline",
    "expected_totals",
    "generate",
    "timeline",
]


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
        tl = timeline(permit, scenario, start)
        self.schedule = Schedule(permit, scenario, seed, tl)
        run_s = self.schedule.setup_s + tl.span_s
        if duration is not None:
            run_s = min(run_s, duration)
        self.stop_at = min(tl.begin + timedelta(seconds=run_s), tl.end)
        self.keys = keys
        self.gates = list(permit.gates)
        self.lots = [lot for lot, cap in permit.lots.items() if cap > 0]
        self.floor = Floor(permit, tl.begin)

    def gate_weights(self) -> list[float]:
        permit, sc = self.schedule.permit, self.schedule.scenario
        auto = [g for g in self.gates if g not in permit.manual_gates]
        explicit = sc.gate_weights
        auto_w = sum(explicit.get(g, 1.0) for g in auto)
        n_manual = len(self.gates) - len(auto)
        share = sc.manual_share
        manual_w = share * auto_w / (1 - share * n_manual) if auto_w and n_manual else 1.0
        return [explicit.get(g, manual_w if g in permit.manual_gates else 1.0) for g in self.gates]

    def messages(self) -> Iterator[SimMessage]:
        schedule, floor = self.schedule, self.floor
        flows = persons(schedule, self.gate_weights())
        occupied = cars_parked(schedule, flows, [schedule.permit.lots[lot] for lot in self.lots])
        floor.install(self.gates, self.lots, self.keys, schedule.scenario.heartbeat_s)
        auto = [g for g in self.gates if g not in schedule.permit.manual_gates] or self.gates
        scheduled = staff_events(schedule, floor) + fault_events(schedule, floor, auto)
        heapq.heapify(scheduled)
        for k in range(schedule.n_steps):
            for t, _, act in self._actions(k, scheduled, flows, occupied):
                at = schedule.timeline.zero + timedelta(milliseconds=round(t * 1000))
                if at >= self.stop_at:
                    return
                floor.now = at
                floor.fault_tag = None
                act()
                yield from floor.collect(at)

    def _actions(
        self, k: int, scheduled: list[Event], flows: Flows, occupied: list[list[int]]
    ) -> list[Event]:
        """What happens in step ``k``, in order: devices coming online (in the first
        step), each periodic device at its own point in the step, the events due."""
        t0, step = self.schedule.offset(k), self.schedule.step
        order = list(self.floor.devices)
        periodic = [sid for sid in order if sid in self.gates or sid in self.lots]
        slot = {sid: (i + 1) * step / (len(periodic) + 2) for i, sid in enumerate(periodic)}
        actions: list[Event] = []
        if k == 0:  # devices come online at their own point in the step, too
            for i, sid in enumerate(order):
                actions.append((t0 + slot.get(sid, 0.0), -len(order) + i, self._attach(sid)))
        for i, sid in enumerate(periodic):
            actions.append((t0 + slot[sid], i, self._periodic(sid, k, flows, occupied)))
        while scheduled and scheduled[0][0] < t0 + step:
            t, n, act = heapq.heappop(scheduled)
            actions.append((max(t, t0), n, act))  # nothing happens before setup
        actions.sort(key=lambda a: (a[0], a[1]))
        return actions

    def _attach(self, sid: str) -> Action:
        return lambda: self.floor.attach(sid)

    def _periodic(self, sid: str, k: int, flows: Flows, occupied: list[list[int]]) -> Action:
        """A gate counter counts (or heartbeats); a lot sensor reports a change (or heartbeats)."""

        def act() -> None:
            device = self.floor.devices[sid]
            if isinstance(device, GateCounter):
                g = self.gates.index(sid)
                if flows.ins[k][g] or flows.outs[k][g]:
                    device.count(flows.ins[k][g], flows.outs[k][g])
                else:
                    device.tick()
            elif isinstance(device, LotSensor):
                cars = occupied[k][self.lots.index(sid)]
                if cars != device.occupied:
                    device.set_occupied(cars)
                else:
                    device.tick()

        return act
