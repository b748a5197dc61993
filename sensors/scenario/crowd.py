"""The crowd model: persons through each gate and cars in each lot, step by step.

Computed up front for the whole scenario, before any device speaks. Per step
(``step_s``) the model draws arrivals (Poisson, at each active phase's rate) and
departures (each person present leaves at the phases' hazard; a phase that ``empty``-s
walks everyone out evenly by its end), and spreads both over the gates by weight. A
surge drives attendance to its peak over its ramp and holds it there: one in for each
one out, at the same gate. Cars park ``lead`` ahead of their passengers, one per
``persons_per_car``, into the lot with most free spaces by chance, and leave
``exit_lag`` after them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from sensors.scenario.model import Phase
from sensors.scenario.schedule import Schedule

__all__ = ["Flows", "cars_parked", "persons"]


@dataclass(frozen=True, slots=True)
class Flows:
    """Persons in and out, per step and per gate (indexed as the gates passed in)."""

    ins: list[list[int]]
    outs: list[list[int]]


def persons(schedule: Schedule, weights: list[float]) -> Flows:
    """Persons in and out per step and gate, following the phases and the surge."""
    n = schedule.n_steps
    ins = [[0] * len(weights) for _ in range(n)]
    outs = [[0] * len(weights) for _ in range(n)]
    if not weights or not any(weights):
        return Flows(ins, outs)
    rng = schedule.rng("crowd")
    crowd = _Crowd(schedule, rng)
    for k in range(n):
        arrived, left, holding = crowd.step(schedule.offset(k))
        if holding:
            # A sold-out crowd holds: one comes in for each one who leaves, at the
            # same gate, so no counter's message ever shows more than the peak.
            for g in _spread(rng, left, weights):
                ins[k][g] += 1
                outs[k][g] += 1
            continue
        for g in _spread(rng, arrived, weights):
            ins[k][g] += 1
        for g in _spread(rng, left, weights):
            outs[k][g] += 1
    return Flows(ins, outs)


@dataclass(frozen=True, slots=True)
class _Window:
    """A phase with its bounds in seconds after 0:00."""

    start: float
    end: float
    phase: Phase


class _Crowd:
    """Those present, and how many come and go in the step starting at ``t``."""

    def __init__(self, schedule: Schedule, rng: random.Random) -> None:
        self.rng = rng
        self.step_s = schedule.step
        self.unit = schedule.scenario.unit(schedule.permit)
        secs = schedule.secs
        self.windows = [
            _Window(secs(p.start), secs(p.end), p)
            for p in schedule.scenario.phases
            if secs(p.end) > secs(p.start)
        ]
        self.present = 0
        self.surge_at = self.ramp_end = self.hold_end = math.inf
        self.target = 0
        self.surge_owed: int | None = None
        surge = schedule.scenario.surge
        if surge is not None:
            self.surge_at = secs(surge.at)
            self.ramp_end = self.surge_at + max(secs(surge.ramp), self.step_s)
            self.hold_end = self.ramp_end + max(0.0, secs(surge.hold))
            self.target = math.ceil(surge.peak * self.unit)

    def step(self, t: float) -> tuple[int, int, bool]:
        """(arrived, left, holding) for the step at ``t``; holding: a surge is held."""
        if self.surge_at <= t < self.ramp_end:
            arrived = self._ramp(t)
            self.present += arrived
            return arrived, 0, False
        active = [w for w in self.windows if w.start <= t < w.end]
        lam = sum(w.phase.arrive * self.unit * self.step_s / (w.end - w.start) for w in active)
        left = self._leaving(t, active)
        if self.ramp_end <= t < self.hold_end:
            return 0, left, True
        arrived = _poisson(self.rng, lam)
        self.present += arrived - left
        return arrived, left, False

    def _ramp(self, t: float) -> int:
        """Arrivals that bring the crowd to the surge's peak evenly by the ramp's end."""
        if self.surge_owed is None:
            self.surge_owed = max(0, self.target - self.present)
        steps_left = max(1, math.ceil((self.ramp_end - t) / self.step_s))
        arrived = math.ceil(self.surge_owed / steps_left)
        self.surge_owed -= arrived
        return arrived

    def _leaving(self, t: float, active: list[_Window]) -> int:
        """Departures: everyone evenly by a draining phase's end, else at the hazard."""
        draining = [w.end for w in active if w.phase.empty]
        if draining:
            steps_left = max(1, math.ceil((min(draining) - t) / self.step_s))
            return math.ceil(self.present / steps_left)
        hazard = sum(w.phase.leave_per_hour for w in active)
        return _binomial(self.rng, self.present, 1 - math.exp(-hazard * self.step_s / 3600))


def cars_parked(schedule: Schedule, flows: Flows, capacities: list[int]) -> list[list[int]]:
    """Cars in each lot after each step (arrivals ``lead`` early, exits ``exit_lag`` late)."""
    n = schedule.n_steps
    occupied = [[0] * len(capacities) for _ in range(n)]
    if not capacities:
        return occupied
    rng = schedule.rng("parking")
    cars_in, cars_out = _car_moves(schedule, flows)
    lots = range(len(capacities))
    now = [0] * len(capacities)
    around = 0  # cars that came, parked or turned away, and have not left yet
    for k in range(n):
        for _ in range(cars_in[k]):
            around += 1
            free = [c - o for c, o in zip(capacities, now, strict=True)]
            if sum(free) > 0:  # else every lot is full and the car parks elsewhere
                now[rng.choices(lots, weights=free)[0]] += 1
        for _ in range(cars_out[k]):
            parked = sum(now)
            if around <= 0:
                break
            # The leaving car is one of those in a lot, or one that found none.
            if parked and rng.random() * around < parked:
                now[rng.choices(lots, weights=now)[0]] -= 1
            around -= 1
        occupied[k] = list(now)
    return occupied


def _car_moves(schedule: Schedule, flows: Flows) -> tuple[list[int], list[int]]:
    """Cars arriving and leaving per step: one per ``persons_per_car``, shifted in time."""
    n, parking = schedule.n_steps, schedule.scenario.parking
    per_car = parking.persons_per_car
    lead, lag = schedule.steps(parking.lead), schedule.steps(parking.exit_lag)
    cars_in = [0] * n
    cars_out = [0] * n
    cum_in = cum_out = 0
    for k in range(n):
        before_in, before_out = cum_in, cum_out
        cum_in += sum(flows.ins[k])
        cum_out += sum(flows.outs[k])
        cars_in[max(0, k - lead)] += math.floor(cum_in / per_car) - math.floor(before_in / per_car)
        if k + lag < n:
            cars_out[k + lag] += math.floor(cum_out / per_car) - math.floor(before_out / per_car)
    return cars_in, cars_out


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
