"""Counts that check each other: ``cars-exceed-persons`` (docs/law.md, "When the lots
contradict the gates").

Every parked car brought at least one person: more cars in all lots than persons counted
plus staff on duty means a gate counter is missing entries. The alert waits
``pending_s`` (10 s here); attendance is indeterminate from the instant it holds, as it
is from the instant a gate counter goes silent, so a breach resting on attendance is
indeterminate for that time and measured again once the counts agree.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from core_support import US, Driver, local, permit_variant, when

from kent_ops.core.counting import CARS_EXCEED, cars_exceed_persons

PERMIT = permit_variant(
    {"alerting.pending_s": 10, "alerting.clear_s": 30, "alerting.stale_after_s": 864000}
)
T = local(12)


def at(seconds: float) -> datetime:
    return T + timedelta(seconds=seconds)


def stretches(alert: dict[str, Any]) -> list[tuple[str, datetime | None, datetime | None]]:
    return [(x["basis"], when(x["start"]), when(x["end"])) for x in alert["stretches"]]


def six_hundred_and_cars(cars_in_lot_b: int) -> Driver:
    """600 persons with 22 staff (2 nurses, 20 guards, no doctor: a breach resting on
    attendance over 500), and 400 + ``cars_in_lot_b`` cars in the two lots, at noon."""
    d = Driver(PERMIT)
    d.staff(T, doctors=0, nurses=2, security=20)
    d.present(600, T)
    d.lot("lot-a", T, 400)
    d.lot("lot-b", T, cars_in_lot_b)
    return d


def test_the_edge_in_numbers() -> None:
    assert not cars_exceed_persons(622, 600, 22)
    assert cars_exceed_persons(623, 600, 22)
    assert not cars_exceed_persons(0, 0, 0)


def test_as_many_cars_as_persons_and_staff_is_no_contradiction() -> None:
    d = six_hundred_and_cars(222)  # 622 cars = 600 persons + 22 staff
    d.tick(at(600))
    assert d.alerts("cars-exceed-persons") == []
    assert d.pending("cars-exceed-persons") == []
    assert d.status()["attendance"]["uncertain"] is False
    assert [x["basis"] for x in d.alerts("doctor-on-duty")[0]["stretches"]] == ["measured"]


def test_one_car_more_is_raised_after_pending_s_with_its_numbers() -> None:
    d = six_hundred_and_cars(222)
    d.lot("lot-b", at(60), 223)  # 623 cars, one more than persons and staff
    assert [when(p["since"]) for p in d.pending("cars-exceed-persons")] == [at(60)]
    d.tick(at(70) - US)
    assert d.alerts("cars-exceed-persons") == []  # held 10 s less a microsecond: pending
    d.tick(at(70))
    (alert,) = d.alerts("cars-exceed-persons")
    assert (when(alert["since"]), when(alert["raised_at"])) == (at(60), at(70))
    assert (alert["severity"], alert["cite"], alert["subject"]) == ("data", "—", None)
    assert alert["message"] == (
        "623 cars are parked but the gates count 600 persons and 22 staff: a gate counter "
        "may be missing entries"
    )
    assert alert["observed"] == {"vehicles": 623, "attendance": 600, "staff_on_duty": 22}


def test_attendance_is_indeterminate_while_it_holds_and_breaches_on_it_say_so() -> None:
    """doctor-on-duty (none, with more than 500 present) rests on attendance: measured
    until the lots contradict the gates at 12:01, indeterminate while they do, measured
    again from 12:02 when a late entry brings the gates level."""
    d = six_hundred_and_cars(222)
    d.lot("lot-b", at(60), 223)
    assert d.status()["attendance"]["uncertain"] is True  # from the instant it holds
    (doctor,) = d.alerts("doctor-on-duty")
    assert doctor["uncertain"] is True
    assert doctor["stretches"][-1]["rests_on"] == [CARS_EXCEED]
    d.present(601, at(120))  # one more person counted: 623 = 601 + 22
    assert d.status()["attendance"]["uncertain"] is False
    (doctor,) = d.alerts("doctor-on-duty")
    assert stretches(doctor) == [
        ("measured", T, at(60)),
        ("indeterminate", at(60), at(120)),
        ("measured", at(120), None),
    ]
    (cross,) = d.alerts("cars-exceed-persons")
    assert when(cross["ended_at"]) == at(120)
    spans = [(s.figure, s.why, s.start, s.end) for s in d.engine.doubt.spans]
    assert spans == [("attendance", CARS_EXCEED, _us(at(60)), _us(at(120)))]


def test_a_gate_message_alone_that_brings_persons_below_the_cars_is_taken_at_once() -> None:
    """A message that moves attendance alone may leave the rules unpassed while no rule
    can flip (core/band.py): this one can, so it is taken at its own instant."""
    d = six_hundred_and_cars(222)
    d.present(601, at(30))
    d.present(599, at(45))  # two left: 622 cars > 599 + 22
    assert d.status()["attendance"]["uncertain"] is True
    assert [when(p["since"]) for p in d.pending("cars-exceed-persons")] == [at(45)]


def test_a_contradiction_shorter_than_pending_s_raises_nothing_but_is_on_the_record() -> None:
    d = six_hundred_and_cars(222)
    d.lot("lot-b", at(60), 224)
    d.lot("lot-b", at(65), 222)
    d.tick(at(600))
    assert d.alerts("cars-exceed-persons") == []
    (span,) = d.engine.doubt.spans
    assert (span.why, span.start, span.end) == (CARS_EXCEED, _us(at(60)), _us(at(65)))


def test_staff_on_duty_count_as_persons_the_gates_do_not() -> None:
    d = six_hundred_and_cars(223)  # 623 cars, 622 persons and staff: holds
    assert d.status()["attendance"]["uncertain"] is True
    d.staff(at(30), security=21)  # a guard badges on: 623 = 600 + 23
    assert d.status()["attendance"]["uncertain"] is False


def _us(moment: datetime) -> int:
    return round(moment.timestamp() * 1_000_000)
