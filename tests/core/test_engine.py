"""The engine's face: status shape, clocks, adjustments, and results that do not depend
on how often anyone ticks or looks."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import msgspec
import pytest
from core_support import QUICK, TOPICS, Driver, local, permit_variant, utc, when
from wire_support import ack, badge, gate_count, inspection, lot_occupancy

from kent_ops.core.engine import Engine
from kent_ops.core.wire import Topics

SPEC_STATUS_KEYS = {
    "ts",
    "event",
    "permit",
    "assembly",
    "properties",
    "attendance",
    "admit",
    "parking",
    "medical",
    "security",
    "sensors",
    "active_alerts",
    "pending",
    "rejected",
}
SPEC_ALERT_KEYS = {
    "id",
    "rule",
    "subject",
    "cite",
    "severity",
    "state",
    "since",
    "raised_at",
    "ended_at",
    "cleared_at",
    "observed",
    "required",
    "message",
    "acknowledged",
    "evidence",
    "uncertain",
}


def test_an_unknown_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="clock"):
        Engine(permit_variant(), clock="sundial")  # type: ignore[arg-type]


def test_status_before_anything_happened() -> None:
    status = Engine(permit_variant()).status()
    assert status.ts is None
    assert status.attendance.current == 0
    assert status.admit is True
    assert status.active_alerts == []
    assert status.rejected == 0


def test_status_has_spec_3s_shape_and_the_extras() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(12), doctors=1, nurses=6, security=18)
    d.gate("north", local(12), 3000, 200)
    d.gate("south", local(12), 1410, 1090)
    d.lot("lot-a", local(12), 540)
    status = d.status()
    assert set(status) >= SPEC_STATUS_KEYS
    assert status["ts"] == utc(local(12))
    assert status["event"] == "kent-summer-fest-2027"
    assert status["event_name"] == "Kent Summer Music Festival"
    assert status["timezone"] == "America/New_York"
    assert status["permit"] == {
        "number": "MG-2027-003",
        "status": "issued",
        "since": None,
        "resolution": None,
    }
    assert status["assembly"] == {"on": True, "window": 0}
    (only,) = status["properties"].values()
    assert only["attendance"] == status["attendance"]["current"] == 3120
    assert status["window"] == {
        "inside": True,
        "start": "2027-07-04T14:00:00Z",
        "end": "2027-07-05T03:30:00Z",
    }
    attendance = status["attendance"]
    assert attendance["current"] == 3120
    assert attendance["entries"] == 4410
    assert attendance["exits"] == 1290
    assert attendance["peak"] == 3120
    assert attendance["max_at_one_time"] == 4000
    assert attendance["threshold"] == 500
    assert attendance["uncertain"] is False
    assert status["parking"] == {
        "spaces_provided": 1050,
        "spaces_required": 780,
        "occupied": 540,
        "vehicles_at_one_time": 1100,
    }
    assert status["medical"] == {
        "doctors_on_duty": 1,
        "doctors_required": 1,
        "nurses_on_duty": 6,
        "nurses_required": 7,
        "uncertain": False,
    }
    assert status["security"] == {"on_duty": 18, "declared": 20}
    no_loss = {"gaps": 0, "missing": 0, "last_gap": None, "stuck": False, "doubt": None}
    assert status["sensors"]["north"] == {
        "kind": "gate",
        "online": True,
        "last_seen": utc(local(12)),
        **no_loss,
    }
    assert status["sensors"]["first-aid"]["kind"] == "station"
    assert status["sensors"]["lot-b"] == {
        "kind": "lot",
        "online": True,
        "last_seen": None,
        **no_loss,
    }
    assert status["gates"]["south"]["in"] == 1410
    assert status["gates"]["south"]["out"] == 1090
    assert status["gates"]["south"]["net"] == 320
    assert status["gates"]["north-manual"]["manual"] is True
    # A deputy's tally nobody has used: not used, which is not offline.
    assert status["gates"]["north-manual"]["online"] is None
    assert status["sensors"]["north-manual"]["online"] is None
    assert status["lots"]["lot-a"] == {
        "capacity": 600,
        "occupied": 540,
        "free": 60,
        "share": 0.9,
        "online": True,
        "last_seen": utc(local(12)),
    }
    assert status["lots"]["lot-b"]["occupied"] is None
    rules = {d.engine.alerts[a].rule for a in status["active_alerts"]}
    assert rules == {"nurse-ratio", "security-staffing"}
    json.dumps(status)  # published as JSON: everything in it must serialise


def test_every_alert_has_spec_3s_shape() -> None:
    d = Driver(permit_variant(QUICK))
    d.present(1001, local(12))
    alerts = d.alerts()
    assert alerts
    for alert in alerts:
        assert set(alert) >= SPEC_ALERT_KEYS
        assert "worst" in alert
        json.dumps(alert)
    nurse = d.alerts("nurse-ratio")[0]
    assert nurse["message"] == "0 nurses on duty; 1,001 persons need 3 (permit:C(9))"
    assert nurse["acknowledged"] == []
    assert nurse["evidence"] == {"record": None, "hash": None}


def test_the_sensor_clock_takes_the_payload_ts() -> None:
    d = Driver(permit_variant(QUICK))
    result = d.gate("north", local(12), 1, 0, received=local(15))
    assert result.accepted
    assert result.kind == "gate"
    assert result.time == local(12)
    assert d.engine.now == local(12)


def test_the_wall_clock_takes_the_receive_time() -> None:
    d = Driver(permit_variant(QUICK), clock="wall")
    result = d.gate("north", local(12), 1, 0, received=local(12, 0, 10))
    assert result.time == local(12, 0, 10)
    assert d.engine.now == local(12, 0, 10)
    assert d.status()["gates"]["north"]["last_seen"] == utc(local(12, 0, 10))


def test_feed_reports_the_kind_of_each_message() -> None:
    d = Driver(permit_variant(QUICK))
    assert d.gate("north", local(12), 1, 0).kind == "gate"
    assert d.lot("lot-a", local(12), 1).kind == "lot"
    assert d.badge(local(12), "RN-1", "nurse", "on").kind == "badge"
    assert d.availability("north", local(12), "online").kind == "availability"
    assert d.inspector("i", "note", local(12), text="hello").kind == "note"
    assert d.feed("nonsense/topic", b"{}", local(12)).kind == "unknown"  # not ours, on purpose


def test_a_duplicate_is_accepted_with_a_reason_and_changes_nothing() -> None:
    d = Driver(permit_variant(QUICK))
    d.gate("north", local(12), 10, 0, seq=5)
    before = d.status()
    again = d.gate("north", local(12), 10, 0, seq=5)
    assert again.accepted
    assert again.reason is not None
    assert "already counted" in again.reason
    after = d.status()
    assert after["attendance"] == before["attendance"]
    assert after["accepted"] == before["accepted"] + 1
    assert after["rejected"] == 0


def test_an_adjustment_sets_attendance_and_later_counts_add_to_it() -> None:
    d = Driver(permit_variant(QUICK))
    d.gate("north", local(12), 100, 0)
    r = d.inspector("insp-1", "adjust", local(12, 1), attendance=130, reason="sweep count")
    assert r.accepted
    status = d.status()
    assert status["attendance"]["current"] == 130
    assert status["attendance"]["offset"] == 30
    assert status["adjustments"] == [
        {
            "by": "insp-1",
            "at": utc(local(12, 1)),
            "attendance": 130,
            "offset": 30,
            "reason": "sweep count",
        }
    ]
    d.gate("north", local(12, 2), 110, 5)
    assert d.attendance == 135
    assert d.status()["attendance"]["entries"] == 110  # the offset corrects presence only


def test_an_adjustment_can_cross_a_threshold() -> None:
    d = Driver(permit_variant({**QUICK, "permit.status": "pending"}))
    d.gate("north", local(12), 400, 0)
    assert not d.holds("permit-required")
    d.inspector("insp-1", "adjust", local(12, 1), attendance=501, reason="drone count")
    assert d.holds("permit-required")


def test_an_alert_cites_its_record_by_id_and_leaves_the_hash_to_the_log() -> None:
    d = Driver(permit_variant(QUICK))
    d.feed(
        TOPICS.gate_count("north"),
        gate_count(1, local(12), 1001),
        local(12),
        record_id=41,
    )
    assert d.alerts("nurse-ratio")[0]["evidence"] == {"record": 41, "hash": None}
    assert not hasattr(d.engine, "note_record_hash")


def test_the_worst_figure_is_kept_even_between_evaluations() -> None:
    small = {
        "limits.max_at_one_time": 1000,
        "alerting.hold_at": 1000,
        "alerting.resume_below": 990,
        "alerting.pending_s": 10,
    }
    d = Driver(permit_variant({**QUICK, **small}))
    d.staff(local(12), doctors=1, nurses=10, security=20)
    d.present(1001, local(12))
    for i, n in enumerate([1100, 1400, 1200, 1050], start=1):
        d.present(n, local(12, 0, i))
    d.tick(local(12, 1))
    (alert,) = d.alerts("max-at-one-time")
    assert d.status()["attendance"]["peak"] == 1400
    assert alert["worst"]["observed"] == {"attendance": 1400}
    assert alert["observed"] == {"attendance": 1050}
    assert when(alert["raised_at"]) == local(12, 0, 10)


def test_the_worst_shortfall_is_the_largest_one() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(12), doctors=1, nurses=2, security=20)
    d.present(1001, local(12))
    d.present(2600, local(12, 0, 1))  # 6 needed, 4 short
    d.present(1300, local(12, 0, 2))
    (alert,) = d.alerts("nurse-ratio")
    assert alert["worst"] == {
        "observed": {"nurses_on_duty": 2, "attendance": 2600},
        "required": {"nurses": 6},
    }
    assert alert["required"] == {"nurses": 3}


# -- the same records at the same times give the same results, however it is ticked ----------


def scripted_day() -> list[tuple[str, bytes | None, datetime]]:
    """A morning with something for every rule; ``None`` payload means tick only."""
    rng = random.Random(20270704)
    out: list[tuple[str, bytes | None, datetime]] = []

    def add(topic: str, payload: bytes, t: datetime) -> None:
        out.append((topic, payload, t))

    t = local(9, 30)
    seq: dict[str, int] = {}
    totals = {"north": [0, 0], "south": [0, 0]}
    restart_done = False

    done: set[datetime] = set()

    def once(at: datetime) -> bool:
        """True for the first record at or after ``at``: one-off events happen once."""
        if t < at or at in done:
            return False
        done.add(at)
        return True

    def nxt(sensor: str) -> int:
        seq[sensor] = seq.get(sensor, 0) + 1
        return seq[sensor]

    for role, n in (("doctor", 1), ("nurse", 2), ("security", 18)):
        for i in range(n):
            body = badge(nxt("first-aid"), t, f"{role}-{i}", role)
            add(TOPICS.staff_badge("first-aid"), body, t)
    while t < local(12):
        t += timedelta(seconds=rng.choice([7, 15, 30]))
        for gate in ("north", "south"):
            if gate == "south" and local(10, 50) <= t < local(10, 52):
                continue  # south falls silent long enough to go stale, then returns
            ins = rng.randint(0, 25)
            outs = rng.randint(0, 8) if t > local(11) else rng.randint(0, 2)
            totals[gate][0] += ins
            totals[gate][1] += outs
            if gate == "north" and not restart_done and t >= local(11):
                restart_done = True
                seq["north"] = -1
                totals["north"] = [3, 0]
            body = gate_count(nxt(gate), t, totals[gate][0], totals[gate][1])
            add(TOPICS.gate_count(gate), body, t)
        if once(local(10, 30)):
            add(TOPICS.availability("south"), b"offline", t)
        if once(local(10, 45)):
            add(TOPICS.availability("south"), b"online", t)
        if once(local(11, 10)):
            add(TOPICS.gate_count("north"), b'{"seq": "garbage"}', t)  # refused, on purpose
        if once(local(11, 15)):
            add(TOPICS.gate_count("north-manual"), gate_count(1, t, 4), t)
        if once(local(11, 20)):
            body = inspection(t, "C(3)", "deficient", "leak")
            add(TOPICS.inspector("insp-2", "inspection"), body, t)
        if once(local(11, 30)):
            add(TOPICS.inspector("insp-2", "ack"), ack(t, "A-0001"), t)
        if once(local(11, 40)):
            add(TOPICS.inspector("insp-2", "inspection"), inspection(t, "C(3)", "ok"), t)
        if once(local(11, 50)):
            body = badge(nxt("first-aid"), t, "nurse-9", "nurse")
            add(TOPICS.staff_badge("first-aid"), body, t)
        # Lots report 3 s after the gates, so gate-only instants exist (where the engine
        # may defer its rule pass) and a lot message is not always there to hide a slip.
        lot_t = t + timedelta(seconds=3)
        for lot, cap in (("lot-a", 600), ("lot-b", 450)):
            minutes = (lot_t - local(9, 30)).total_seconds() / 60
            occupied = min(cap, int(minutes * 4) + rng.randint(0, 5))
            body = lot_occupancy(nxt(lot), lot_t, occupied)
            add(TOPICS.lot_occupancy(lot), body, lot_t)
    return out


END = local(12, 30)


def replay(ticks: Callable[[datetime, datetime], list[datetime]], *, look: bool) -> Driver:
    """Feed the scripted day, ticking at ``ticks(previous, next)`` between records."""
    d = Driver(permit_variant())
    previous: datetime | None = None
    for topic, payload, t in scripted_day():
        if previous is not None:
            for tick in ticks(previous, t):
                d.tick(tick)
                if look:
                    d.engine.collect_changes()
                    d.engine.alerts  # noqa: B018 - looking must not change anything
        if topic.endswith("/availability"):
            d.tick(t)  # availability has no ts: it is taken at the engine's now
        assert payload is not None
        d.feed(topic, payload, t)
        previous = t
    d.tick(END)
    return d


def no_ticks(a: datetime, b: datetime) -> list[datetime]:
    return []


def every_second(a: datetime, b: datetime) -> list[datetime]:
    n = int((b - a).total_seconds())
    return [a + timedelta(seconds=i) for i in range(1, n + 1)]


def every_seven_minutes(a: datetime, b: datetime) -> list[datetime]:
    out = []
    t = local(9, 30)
    while t <= b:
        if t > a:
            out.append(t)
        t += timedelta(minutes=7)
    return out


def odd_instants(a: datetime, b: datetime) -> list[datetime]:
    rng = random.Random(a.timestamp())
    span = int((b - a).total_seconds() * 1_000_000)
    if span < 1:
        return []
    return sorted(
        a + timedelta(microseconds=rng.randint(1, span)) for _ in range(rng.randint(0, 3))
    )


@pytest.fixture(scope="module")
def baseline() -> Driver:
    return replay(no_ticks, look=False)


def test_the_scripted_day_exercises_many_rules(baseline: Driver) -> None:
    rules = {a["rule"] for a in baseline.alerts()}
    assert {
        "permit-required",
        "nurse-ratio",
        "security-staffing",
        "lot-full",
        "sensor-offline",
        "counter-reset",
        "facility-deficient",
    } <= rules
    assert baseline.status()["rejected"] == 1
    south = [
        a
        for a in baseline.alerts("sensor-offline", "south")
        if a["worst"]["observed"]["stale"] and when(a["since"]) < local(11)  # type: ignore[operator]
    ]
    assert len(south) == 1
    assert when(south[0]["since"]) >= local(10, 50)  # type: ignore[operator]
    assert when(south[0]["ended_at"]) <= local(10, 52, 30)  # type: ignore[operator]
    assert baseline.alerts()[0]["acknowledged"]


@pytest.mark.parametrize(
    ("ticks", "look"),
    [
        (every_second, False),
        (every_second, True),
        (every_seven_minutes, True),
        (odd_instants, True),
    ],
    ids=["every-second", "every-second-and-looking", "every-7-min", "odd-instants"],
)
def test_ticks_and_looks_do_not_change_the_results(
    baseline: Driver, ticks: Callable[[datetime, datetime], list[datetime]], look: bool
) -> None:
    other = replay(ticks, look=look)
    assert other.engine.alerts == baseline.engine.alerts
    assert other.status() == baseline.status()


def test_feeding_twice_gives_identical_results(baseline: Driver) -> None:
    again = replay(no_ticks, look=False)
    assert again.engine.alerts == baseline.engine.alerts
    assert again.status() == baseline.status()


def test_alert_times_are_utc_iso(baseline: Driver) -> None:
    for alert in baseline.alerts():
        for key in ("since", "raised_at", "ended_at", "cleared_at"):
            value = alert[key]
            if value is not None:
                assert value.endswith("Z")
                assert when(value) is not None
        assert when(alert["raised_at"]) >= when(alert["since"])  # type: ignore[operator]


def test_topics_are_under_the_event_prefix() -> None:
    d = Driver(permit_variant(QUICK))
    result = d.engine.feed(
        Topics("another-event").gate_count("north"),
        gate_count(1, local(12), 5),
        local(12),
    )
    assert not result.accepted
    assert d.engine.feed(
        TOPICS.gate_count("north"),
        gate_count(1, local(12), 5),
        local(12),
    ).accepted


# -- looking between messages changes nothing ---------------------------------------------------


def stretch(look: bool, attendances: list[int], *, end: str) -> dict[str, dict[str, Any]]:
    """Raise application-staffing (a nurse per 100 asked, the law's one per 500 met), move
    attendance where no rule flips, then end the stretch."""
    d = Driver(permit_variant({**QUICK, "staffing.persons_per_nurse": 100}))
    d.staff(local(12), doctors=1, nurses=2, security=20)
    d.present(511, local(12))  # 6 nurses asked, 2 on duty (the law's 2 met): raised
    for i, n in enumerate(attendances, start=1):
        d.present(n, local(12, 0, i))
        if look:
            d.engine.collect_changes()
            d.engine.alerts  # noqa: B018 - a dashboard reading the alerts
    t = local(12, 1)
    if end == "badge":
        d.staff(t, nurses=6)
    elif end == "empty":
        d.present(0, t)
    else:
        d.tick(t)
    return msgspec.to_builtins(d.engine.alerts)


@pytest.mark.parametrize("end", ["badge", "empty", "tick"])
@pytest.mark.parametrize("attendances", [[522, 525], [525, 522], [512, 515, 514]])
def test_looking_during_a_stretch_changes_no_alert(attendances: list[int], end: str) -> None:
    assert stretch(True, attendances, end=end) == stretch(False, attendances, end=end)


def test_the_worst_of_equal_shortfalls_is_the_largest_attendance() -> None:
    alerts = stretch(False, [522, 525, 523], end="badge").values()
    (alert,) = [a for a in alerts if a["rule"] == "application-staffing"]
    assert alert["worst"]["observed"] == {
        "doctors_on_duty": 1, "nurses_on_duty": 2, "attendance": 525,
    }  # fmt: skip
    assert alert["worst"]["required"] == {
        "doctors": 1, "nurses": 6, "law_doctors": 1, "law_nurses": 2, "persons_per_nurse": 100,
    }  # fmt: skip


def test_a_tally_is_online_null_until_it_counts_someone_then_online_or_offline() -> None:
    d = Driver(permit_variant(QUICK))
    d.gate("north", local(12), 100, 0)

    def tally() -> tuple[Any, Any]:
        status = d.status()
        return status["gates"]["north-manual"]["online"], status["sensors"]["north-manual"][
            "online"
        ]

    assert tally() == (None, None)
    d.availability("north-manual", local(12, 1), "online")  # its view announced itself
    assert tally() == (None, None)  # still nobody counted
    d.gate("north-manual", local(12, 2), 0, 0)  # a heartbeat of nothing counted
    assert tally() == (None, None)
    d.gate("north-manual", local(12, 3), 1, 0)  # the deputy counted someone
    assert tally() == (True, True)
    d.availability("north-manual", local(12, 4), "offline")
    assert tally() == (False, False)
