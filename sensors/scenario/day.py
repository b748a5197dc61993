"""The event-day generator: a permit and a scenario in, timed sensor messages out.

:func:`generate` is pure: no broker, no clock, no files beyond reading the scenario. The
same permit, scenario and seed always give the same messages, byte for byte, in the
same order. The simulator paces them against the wall clock and publishes them; tests,
the replay benchmark and report tests feed them straight to the engine.

The parts: :mod:`sensors.scenario.schedule` cuts the run into steps (``step_s``, 5 s by
default); :mod:`sensors.scenario.crowd` computes, up front, the persons through each gate and
the cars in each lot per step; :mod:`sensors.scenario.events` schedules the staff's
badge scans and the injected faults; :mod:`sensors.floor` holds the real device classes
on in-memory links. This module assembles the messages: per step, every gate counter
and lot sensor publishes if its figure changed, or heartbeats when ``heartbeat_s`` has
passed, every badge reader re-states its roster once a minute, and the scheduled events
due in the step happen. Each device acts at its own
fixed point inside the step, so no two devices share a timestamp.

Only the permit's automatic gates are simulated. A manual tally gate (an id ending in
``-manual``, or ``manual = true``: ``Permit.manual_gates``) is a deputy's, who counts
on it from the gate view; no scenario publishes on it, not even its availability.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from kent_ops.core.permit import Permit
from kent_ops.core.wire import keys_for_permit
from sensors.floor import Floor, SimMessage
from sensors.lot_sensor import LotSensor
from sensors.scenario.crowd import Flows, cars_parked, persons
from sensors.scenario.events import Event, fault_events, staff_events
from sensors.scenario.file import load_scenario
from sensors.scenario.model import Scenario
from sensors.scenario.schedule import Schedule, Timeline, timeline
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
        # A manual tally gate belongs to its deputy (docs/protocol.md, Who may publish what): a
        # simulator publishing on it would collide with the deputy's own tally.
        self.gates = [g for g in permit.gates if g not in permit.manual_gates]
        self.lots = [lot for lot, cap in permit.lots.items() if cap > 0]
        self.floor = Floor(permit, tl.begin)
        # Gate counters and lot sensors act at evenly spaced points inside each step; the
        # badge readers (re-stating their rosters when a minute has passed) in the last gap.
        periodic = [*self.gates, *self.lots]
        step = self.schedule.step
        self.slots = {sid: (i + 1) * step / (len(periodic) + 2) for i, sid in enumerate(periodic)}
        self.stations = list(permit.staff_stations)
        last = (len(periodic) + 1) * step / (len(periodic) + 2)
        spacing = step / (len(periodic) + 2) / (len(self.stations) + 1)
        self.restate_at = {sid: last + j * spacing for j, sid in enumerate(self.stations)}

    def gate_weights(self) -> list[float]:
        """Each simulated gate's share of the crowd: its weight in the scenario, or 1."""
        explicit = self.schedule.scenario.gate_weights
        return [explicit.get(g, 1.0) for g in self.gates]

    def messages(self) -> Iterator[SimMessage]:
        schedule, floor = self.schedule, self.floor
        flows = persons(schedule, self.gate_weights())
        occupied = cars_parked(schedule, flows, [schedule.permit.lots[lot] for lot in self.lots])
        floor.install(self.gates, self.lots, self.keys, schedule.scenario.heartbeat_s)
        periodic = {sid: self._count(sid, g, flows) for g, sid in enumerate(self.gates)}
        periodic |= {sid: self._report(sid, i, occupied) for i, sid in enumerate(self.lots)}
        periodic |= {sid: self._restate(sid) for sid in self.stations}
        scheduled = staff_events(schedule, floor) + fault_events(schedule, floor, self.gates)
        heapq.heapify(scheduled)
        for k in range(schedule.n_steps):
            for t, _, act in self._actions(k, scheduled, periodic):
                at = schedule.timeline.zero + timedelta(milliseconds=round(t * 1000))
                if at >= self.stop_at:
                    yield from self._last_report()
                    return
                floor.now = at
                floor.fault_tag = None
                act()
                yield from floor.collect(at)
        yield from self._last_report()

    def _last_report(self) -> Iterator[SimMessage]:
        """At the scenario's end (not a run cut short), every counter and lot sensor reports
        once more, so the record covers the permitted window to its last instant."""
        end = self.schedule.timeline.end
        if self.stop_at < end:
            return
        floor = self.floor
        floor.now = end
        floor.fault_tag = None
        for sid in (*self.gates, *self.lots):
            floor.devices[sid].tick(force=True)
        yield from floor.collect(end)

    def _actions(
        self, k: int, scheduled: list[Event], periodic: dict[str, Callable[[int], None]]
    ) -> list[Event]:
        """What happens in step ``k``, in order: the devices coming online (first step
        only), each gate counter and lot sensor at its own point in the step, and the
        scheduled events due before the next step."""
        t0, step = self.schedule.offset(k), self.schedule.step
        actions: list[Event] = []
        if k == 0:  # devices come online at their own point in the step, too
            devices = list(self.floor.devices)
            for i, sid in enumerate(devices):
                at = t0 + self.slots.get(sid, 0.0)
                actions.append((at, i - len(devices), partial(self.floor.attach, sid)))
        for i, (sid, act) in enumerate(periodic.items()):
            at = self.slots[sid] if sid in self.slots else self.restate_at[sid]
            actions.append((t0 + at, i, partial(act, k)))
        while scheduled and scheduled[0][0] < t0 + step:
            t, n, event = heapq.heappop(scheduled)
            actions.append((max(t, t0), n, event))  # nothing happens before setup
        actions.sort(key=lambda a: (a[0], a[1]))
        return actions

    def _count(self, sid: str, g: int, flows: Flows) -> Callable[[int], None]:
        """Gate ``g``'s counter in step ``k``: counts who came and went, or heartbeats."""
        counter = self.floor.gate(sid)

        def act(k: int) -> None:
            entered, exited = flows.ins[k][g], flows.outs[k][g]
            if entered or exited:
                counter.count(entered, exited)
            else:
                counter.tick()

        return act

    def _restate(self, sid: str) -> Callable[[int], None]:
        """A badge reader in step ``k``: it re-states its roster once a minute has passed."""
        reader = self.floor.devices[sid]

        def act(k: int) -> None:
            reader.tick()

        return act

    def _report(self, sid: str, i: int, occupied: list[list[int]]) -> Callable[[int], None]:
        """Lot ``i``'s sensor in step ``k``: reports a change in its cars, or heartbeats."""
        sensor = self.floor.devices[sid]
        assert isinstance(sensor, LotSensor)

        def act(k: int) -> None:
            cars = occupied[k][i]
            if cars != sensor.occupied:
                sensor.set_occupied(cars)
            else:
                sensor.tick()

        return act
