"""Data rules: what makes a figure doubtful. They cite no law; they say how far to trust one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kent_ops.core.counting import cars_exceed_persons
from kent_ops.core.rules.base import CLOCK_SKEW_S, Condition, Rule, Situation
from kent_ops.core.rules.base import figure as _n
from kent_ops.core.seq import numbers


class SensorOffline(Rule):
    name = "sensor-offline"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Sensor offline"
    summary = "A listed sensor is offline or has been silent too long."
    per_subject = True

    def subjects(self, s: Situation) -> Iterable[str | None]:
        return sorted(s.counts.offline)

    def holds(self, s: Situation, subject: str | None) -> bool:
        return subject in s.counts.offline

    def measure(self, s: Situation, subject: str | None) -> Condition | None:
        live = s.counts.sensors.get(subject or "")
        if live is None:
            return None
        observed = {"kind": live.kind, "available": live.available, "stale": live.stale}
        if live.online:
            observed["online"] = True
        return Condition(observed, {"online": True}, 1)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        if o.get("online"):
            return f"{o['kind']} sensor {subject} is reporting again"
        how = "offline (its availability says so)" if o["available"] is False else "silent"
        return f"{o['kind']} sensor {subject} is {how}; its figures may be behind"


class CounterReset(Rule):
    """An event, not a condition: the engine raises it when a counter restarts."""

    name = "counter-reset"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Gate counter restarted"
    summary = "A gate counter restarted; its totals were stitched."
    per_subject = True

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        seq = o.get("seq")
        return f"gate counter {subject} restarted at seq {seq}; its earlier totals were kept"


class CarsExceedPersons(Rule):
    """Counts that check each other: every parked car brought at least one person, so
    more cars in the lots than persons counted plus staff on duty means a gate counter is
    missing entries. While it holds attendance is indeterminate (core/counting.py,
    ``Counting.doubts``), so no finding rests on a figure the lots contradict."""

    name = "cars-exceed-persons"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "More cars than persons"
    summary = (
        "More cars parked in all lots than persons counted plus staff on duty: a gate "
        "counter may be missing entries."
    )
    reads = frozenset({"vehicles", "staff"})
    """Not attendance: the figure it puts in doubt is the one it checks."""

    def holds(self, s: Situation, subject: str | None) -> bool:
        counts = s.counts
        return cars_exceed_persons(
            counts.occupied_total, s.present, sum(counts.roster.counts.values())
        )

    def measure(self, s: Situation, subject: str | None) -> Condition:
        cars, staff = s.counts.occupied_total, sum(s.counts.roster.counts.values())
        return Condition(
            {"vehicles": cars, "attendance": s.present, "staff_on_duty": staff},
            {"vehicles_at_most": s.present + staff},
            cars - s.present - staff,
        )

    def edges(self, s: Situation) -> Iterable[int]:
        # It holds while attendance is at most cars - staff - 1: it flips there.
        return (s.counts.occupied_total - sum(s.counts.roster.counts.values()) - 1,)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        cars, persons, staff = o["vehicles"], o["attendance"], o["staff_on_duty"]
        parked = f"{_n(cars)} car is" if cars == 1 else f"{_n(cars)} cars are"
        counted = f"{_n(persons)} person" + ("" if persons == 1 else "s")
        return (
            f"{parked} parked but the gates count {counted} and {_n(staff)} staff: a gate "
            "counter may be missing entries"
        )


class SensorGap(Rule):
    """An event, not a condition: the engine raises it when a sensor's ``seq`` skips
    numbers (docs/protocol.md, "Counting")."""

    name = "sensor-gap"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Sensor messages lost"
    summary = "A sensor's seq skipped numbers: messages it sent never reached the log."
    per_subject = True

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        missing = numbers(o["first"], o["last"])
        what = f"{o.get('device', 'sensor')} {subject}: {missing} never received"
        if o.get("roster"):
            return f"{what}; its roster is unknown until it is re-stated"
        return what


class SensorStuck(Rule):
    name = "sensor-stuck"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Sensor stuck"
    summary = (
        "A listed gate or lot's messages arrive but none has been counted for "
        "stale_after_s (each refused, or taken for an old seq)."
    )
    per_subject = True

    def subjects(self, s: Situation) -> Iterable[str | None]:
        sensors = s.counts.sensors
        return sorted(x for x in s.counts.suspect if sensors[x].stuck)

    def holds(self, s: Situation, subject: str | None) -> bool:
        live = s.counts.sensors.get(subject or "")
        return live is not None and live.stuck

    def measure(self, s: Situation, subject: str | None) -> Condition | None:
        live = s.counts.sensors.get(subject or "")
        if live is None:
            return None
        observed: dict[str, Any] = {"kind": live.kind}
        if not live.stuck:
            observed["counting"] = True
        return Condition(observed, {"counting": True}, 1)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        if o.get("counting"):
            return f"{o['kind']} sensor {subject} is counting again"
        return (
            f"{o['kind']} sensor {subject}'s messages arrive but none has been counted "
            "(each refused, or taken for an old seq); its figures may be behind"
        )


class BrokerRestarted(Rule):
    """Raised at once from the instant the service recorded that the broker restarted,
    while any sensor has not been heard since (docs/protocol.md, "The broker restarted")."""

    name = "broker-restarted"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Broker restarted"
    summary = (
        "The event's broker restarted: what it acknowledged since its last save may be "
        "lost; a sensor's figures are indeterminate until it is heard again."
    )
    waits = False

    def subjects(self, s: Situation) -> Iterable[str | None]:
        return (None,) if self.holds(s, None) else ()

    def holds(self, s: Situation, subject: str | None) -> bool:
        sensors = s.counts.sensors
        return any(sensors[x].unheard for x in s.counts.suspect)

    def measure(self, s: Situation, subject: str | None) -> Condition | None:
        how = s.counts.broker_restart
        if how is None:
            return None
        observed: dict[str, Any] = {"how": how}
        if not self.holds(s, subject):
            observed["heard"] = True
        return Condition(observed, {"heard": True}, 1)

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        if o.get("heard"):
            return "every sensor has been heard again since the broker restarted"
        return (
            f"the event's broker restarted ({o['how']}): messages it acknowledged since its "
            "last save may be lost; each sensor's figures are indeterminate until it is "
            "heard again"
        )


class ClockSkew(Rule):
    name = "clock-skew"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Sensor clock off"
    summary = (
        f"A sensor's clock is off by more than {CLOCK_SKEW_S:.0f} s; its messages are timed "
        "on receipt."
    )
    per_subject = True
    waits = False

    def subjects(self, s: Situation) -> Iterable[str | None]:
        return s.skewed

    def holds(self, s: Situation, subject: str | None) -> bool:
        return subject in s.skewed

    def measure(self, s: Situation, subject: str | None) -> Condition | None:
        skew = s.skewed.get(subject or "")
        if skew is None:
            return None  # right again: the skew that was seen stays on the record
        return Condition({"skew_s": round(skew, 1)}, {"skew_s_at_most": CLOCK_SKEW_S}, abs(skew))

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (
            f"sensor {subject}'s clock is off by {o['skew_s']:+,.0f} s; its messages are timed "
            "on receipt"
        )


class EvidenceStorage(Rule):
    """Raised by the service, not the engine: the evidence log cannot be written, or a
    record in it does not verify (``observed`` then names the ``record``)."""

    name = "evidence-storage"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Evidence log not writable"
    summary = (
        "The evidence log cannot be written (messages are not acknowledged until it can), "
        "or it does not verify (the service stops)."
    )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        if "record" in o:
            at = f" at record {o['record']}" if o["record"] is not None else ""
            return (
                f"the evidence log does not verify{at} ({o.get('error', 'error')}); the "
                "service stopped rather than go on over a broken log"
            )
        return (
            f"the evidence log cannot be written ({o.get('error', 'error')}); messages are held "
            "unacknowledged until it can"
        )


class EvidenceFlood(Rule):
    """Raised by the service, not the engine: one source sent more rejected messages than
    the evidence log keeps whole; the rest are kept as a count and their hashes."""

    name = "evidence-flood"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "A source floods the evidence log"
    summary = (
        "One sensor or person sends more rejected messages than the evidence log keeps "
        "whole; the rest are kept as a count and their hashes."
    )
    per_subject = True

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        budget = f"{r.get('rejected_bytes_at_most', 0):,} bytes every {r.get('per_s', 60):g} s"
        return (
            f"{subject} sends more rejected messages than the evidence log keeps whole "
            f"({budget}); the log keeps the rest as a count and their hashes"
        )


def note_skew(skewed: dict[str, float], sensor: str, ts: int, received: int) -> bool:
    """Keep ``sensor``'s clock skew in ``skewed`` while over 30 s; True if that changed.

    The figure is kept to a tenth of a second: a skewed sensor's every message moves the
    exact one by a few milliseconds (network and queueing), which would re-raise its
    alert's figures with each message and say nothing new. Times in microseconds.
    """
    exact = (ts - received) / 1_000_000
    if abs(exact) > CLOCK_SKEW_S:
        skew = round(exact, 1)
        changed = skewed.get(sensor) != skew  # a new figure must be observed now
        skewed[sensor] = skew
        return changed
    return skewed.pop(sensor, None) is not None
