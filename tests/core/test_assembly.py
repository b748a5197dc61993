"""The assembly's edges, revocation at an instant, and one assembly over several properties.

The law's duties bind *the assembly*: it is on while persons are present inside a
permitted window, or while more than 500 are present at any time (docs/law.md). The
example permit's window runs 10:00–23:30 in Kent.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from core_support import DELETE, QUICK, Driver, local, permit_variant, utc, when
from wire_support import clerk_permit

from kent_ops.core.engine import Engine

MEDICAL = ("doctor-on-duty", "nurse-ratio")


def unstaffed(changes: dict[str, Any] | None = None, clock: str = "sensor") -> Driver:
    """No doctor, nurse or guard on duty: any person in the assembly breaches."""
    return Driver(permit_variant({**QUICK, **(changes or {})}), clock=clock)


def assembly(d: Driver) -> dict[str, Any]:
    return d.status()["assembly"]


# -- the assembly's edges ---------------------------------------------------------------------


def test_set_up_crew_before_the_gates_open_is_not_the_assembly() -> None:
    d = unstaffed()
    d.present(20, local(8, 45))
    assert assembly(d) == {"on": False, "window": None}
    assert not any(d.holds(rule) for rule in (*MEDICAL, "parking-ratio"))
    d.tick(local(10))  # the window opens with the crew still inside: the assembly is on
    assert assembly(d) == {"on": True, "window": 0}
    # but 20 persons are no assembly the chapter regulates: its duties bind above 500
    assert not any(d.holds(rule) for rule in (*MEDICAL, "parking-ratio"))
    d.present(501, local(10, 5))
    for rule in MEDICAL:
        (alert,) = d.alerts(rule)
        assert when(alert["since"]) == local(10, 5)


@pytest.mark.parametrize(
    ("persons", "on", "bound"),
    [(0, False, False), (1, True, False), (500, True, False), (501, True, True)],  # fmt: skip
)
def test_persons_at_the_windows_first_second(persons: int, on: bool, bound: bool) -> None:
    """Inside the window any crowd is the assembly; its duties bind only above 500."""
    d = unstaffed()
    d.present(persons, local(10))
    assert assembly(d)["on"] is on
    assert d.holds("doctor-on-duty") is bound
    assert d.holds("nurse-ratio") is bound


def test_the_assembly_ends_at_the_windows_last_instant() -> None:
    d = unstaffed()
    d.present(1, local(23, 29, 59))
    assert assembly(d)["on"] is True
    d.tick(local(23, 30))  # windows are half-open: 23:30 is outside
    assert assembly(d) == {"on": False, "window": None}
    assert d.alerts("doctor-on-duty") == []  # one person never bound the duty


def test_more_than_500_after_the_window_keep_the_assembly_and_its_duties_on() -> None:
    d = unstaffed()
    d.present(501, local(23, 29, 59))
    d.tick(local(23, 30))
    assert assembly(d) == {"on": True, "window": None}
    (alert,) = d.alerts("doctor-on-duty")
    assert alert["ended_at"] is None
    d.present(500, local(23, 40))
    (alert,) = d.alerts("doctor-on-duty")
    assert when(alert["ended_at"]) == local(23, 40)


@pytest.mark.parametrize(("persons", "on"), [(500, False), (501, True)])
def test_outside_every_window_only_more_than_500_is_an_assembly(persons: int, on: bool) -> None:
    d = unstaffed()
    d.present(persons, local(8))
    assert assembly(d)["on"] is on
    assert d.holds("permit-required") is on
    assert d.holds("doctor-on-duty") is on
    assert d.holds("nurse-ratio") is on


def test_drift_after_close_raises_nothing_and_nothing_stays_open() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(9), doctors=1, nurses=10, security=20)
    d.present(2000, local(20))
    d.present(3, local(23, 29))  # the crowd has left; three counts of drift remain
    d.tick(local(23, 30))
    d.staff(local(23, 45), doctors=0, nurses=0, security=0)  # the medical team goes home
    d.tick(local(3, day=5))
    breaches = {a["rule"] for a in d.alerts() if a["severity"] == "breach"}
    assert breaches == set()
    assert all(a["ended_at"] is not None for a in d.alerts())


def test_a_window_across_midnight_without_housing_breaches_at_midnight() -> None:
    d = Driver(permit_variant({**QUICK, "windows": [{"start": local(20), "end": local(2, day=5)}]}))
    d.staff(local(19), doctors=1, nurses=10, security=20)
    d.present(300, local(21))
    d.tick(local(1, day=5))
    (alert,) = d.alerts("overnight-housing")
    assert when(alert["since"]) == local(0, day=5)
    d.tick(local(2, day=5))  # the window closes with 300 still present: the assembly is off
    (alert,) = d.alerts("overnight-housing")
    assert when(alert["ended_at"]) == local(2, day=5)


def test_a_window_across_midnight_with_housing_declared_is_no_breach() -> None:
    window = {"windows": [{"start": local(20), "end": local(2, day=5)}]}
    d = Driver(permit_variant({**QUICK, **window, "facilities.housing_declared": True}))
    d.staff(local(19), doctors=1, nurses=10, security=20)
    d.present(300, local(21))
    d.tick(local(1, day=5))
    assert d.alerts("overnight-housing") == []


# -- revocation at an instant ---------------------------------------------------------------


def clerk(d: Driver, t: Any, status: str, effective: Any, resolution: str = "TB-2027-41") -> Any:
    body = clerk_permit(t, status, effective, resolution, "no doctor on site since 14:10")
    return d.feed(d.topics.clerk_permit("clerk-1"), body, t)


@pytest.mark.parametrize("clock", ["sensor", "wall"])
def test_a_revocation_takes_effect_at_its_instant(clock: str) -> None:
    d = Driver(permit_variant(QUICK), clock=clock)
    d.staff(local(10), doctors=1, nurses=10, security=20)
    d.present(3000, local(11))
    effective = local(11, 30)
    assert clerk(d, local(11, 10), "revoked", effective).accepted
    assert d.status()["permit"]["status"] == "issued"
    d.tick(effective - timedelta(microseconds=1))
    assert not d.holds("permit-required")
    assert not d.holds("dispersing")
    assert d.engine.commands()["north"].admit is True
    d.tick(effective)
    # The crowd may leave for an hour: a warning, and every gate holds (docs/law.md).
    (warning,) = d.alerts("dispersing")
    assert when(warning["since"]) == effective
    assert not d.holds("permit-required")
    assert d.engine.commands()["north"].admit is False
    assert d.engine.commands()["north"].reason == (
        "HOLD: the permit was revoked at 11:30: admit no one (permit:A)"
    )
    assert d.status()["permit"] == {
        "number": "MG-2027-003",
        "status": "revoked",
        "since": utc(effective),
        "resolution": "TB-2027-41",
    }
    d.tick(effective + timedelta(minutes=60) - timedelta(microseconds=1))
    assert not d.holds("permit-required")
    d.tick(effective + timedelta(minutes=60))
    (alert,) = d.alerts("permit-required")
    assert when(alert["since"]) == effective + timedelta(minutes=60)
    assert alert["observed"]["dispersal"] == "allowance over"
    assert alert["observed"]["ended_by"] == "revocation"


def test_a_revocation_backdated_more_than_a_minute_is_refused() -> None:
    d = Driver(permit_variant(QUICK))
    d.present(3000, local(11))
    result = clerk(d, local(12), "revoked", local(12) - timedelta(seconds=61))
    assert not result.accepted
    assert "never backdated" in (result.reason or "")
    assert d.status()["permit"]["status"] == "issued"
    assert d.status()["rejected"] == 1


def test_a_revocation_a_little_in_the_past_takes_effect_on_receipt() -> None:
    d = Driver(permit_variant(QUICK))
    d.present(3000, local(11))
    assert clerk(d, local(12), "revoked", local(12) - timedelta(seconds=60)).accepted
    assert d.status()["permit"]["since"] == utc(local(12))
    (warning,) = d.alerts("dispersing")
    assert when(warning["since"]) == local(12)
    d.tick(local(13))
    (alert,) = d.alerts("permit-required")
    assert when(alert["since"]) == local(13)


def test_reinstatement_ends_the_breach_and_reopens_the_gates() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(10), doctors=1, nurses=10, security=20)
    d.present(3000, local(11))
    clerk(d, local(11), "revoked", local(11))
    assert d.holds("dispersing")
    d.tick(local(12))  # the hour to disperse is over, 3,000 still present
    assert d.holds("permit-required")
    clerk(d, local(13), "issued", local(13), resolution="TB-2027-42")
    assert not d.holds("permit-required")
    (alert,) = d.alerts("permit-required")
    assert when(alert["since"]) == local(12)
    assert when(alert["ended_at"]) == local(13)
    assert d.engine.commands()["north"].admit is True
    assert d.status()["permit"]["status"] == "issued"
    assert d.status()["permit"]["resolution"] == "TB-2027-42"


def test_a_revoked_permit_holds_every_gate_at_500() -> None:
    d = Driver(permit_variant(QUICK))
    d.staff(local(10), doctors=1, nurses=10, security=20)
    clerk(d, local(10, 30), "revoked", local(10, 30))
    d.present(499, local(11))
    assert d.engine.commands()["south"].admit is True
    d.present(500, local(11, 1))
    assert d.engine.commands()["south"].admit is False
    assert not d.holds("permit-required")
    d.present(501, local(11, 2))
    assert d.holds("permit-required")


def test_a_revocation_in_the_permit_file_applies_from_its_instant() -> None:
    permit = permit_variant(
        {
            **QUICK,
            "permit.revoked_at": local(12),
            "permit.revocation_resolution": "TB-2027-40",
        }
    )
    d = Driver(permit)
    d.staff(local(10), doctors=1, nurses=10, security=20)
    d.present(3000, local(11))
    assert not d.holds("permit-required")
    assert not d.holds("dispersing")
    d.tick(local(12))
    (warning,) = d.alerts("dispersing")
    assert when(warning["since"]) == local(12)
    assert d.status()["permit"]["resolution"] == "TB-2027-40"
    d.tick(local(13))
    (alert,) = d.alerts("permit-required")
    assert when(alert["since"]) == local(13)


def test_a_redelivered_revocation_is_recorded_once() -> None:
    d = Driver(permit_variant(QUICK))
    first = clerk(d, local(11), "revoked", local(11, 30))
    again = clerk(d, local(11), "revoked", local(11, 30))
    assert first.accepted
    assert again.accepted
    assert "duplicate" in (again.reason or "")
    assert len(d.engine.permit_status.changes) == 1


def test_a_clerk_message_without_a_resolution_is_rejected() -> None:
    d = Driver(permit_variant(QUICK))
    result = clerk(d, local(11), "revoked", local(11), resolution=" ")
    assert not result.accepted
    assert "resolution" in (result.reason or "")


# -- several properties ---------------------------------------------------------------------

TWO_FIELDS = {
    "property": DELETE,
    "properties": [
        {"id": "main-field", "owner": "R. Smith", "address": "400 Route 52"},
        {"id": "camping", "owner": "J. Lee", "address": "410 Route 52", "tenant": "HV Events"},
    ],
    "gates": [
        {"id": "north", "property": "main-field"},
        {"id": "south", "property": "camping"},
        {"id": "meadow", "from": "main-field", "to": "camping"},
    ],
    "lots": [{"id": "lot-a", "capacity": 600, "property": "main-field"}],
    "staff_stations": [{"id": "first-aid", "property": "main-field"}],
}


def test_persons_are_counted_per_property_and_the_aggregate_is_what_the_law_counts() -> None:
    d = Driver(permit_variant({**QUICK, **TWO_FIELDS}))
    d.staff(local(10), doctors=1, nurses=10, security=20)
    d.gate("north", local(11), 400, 0)
    d.gate("south", local(11), 150, 0)
    d.gate("meadow", local(11), 120, 20)  # 100 walked from the main field to the camping
    status = d.status()
    assert status["attendance"]["current"] == 550
    assert status["attendance"]["entries"] == 550  # a walk between fields is no new entry
    assert status["properties"]["main-field"]["attendance"] == 300
    assert status["properties"]["camping"]["attendance"] == 250
    assert status["properties"]["camping"]["owner"] == "J. Lee"
    assert status["gates"]["meadow"]["property"] is None
    assert status["gates"]["north"]["property"] == "main-field"


def test_the_500_threshold_applies_to_the_aggregate() -> None:
    d = Driver(permit_variant({**QUICK, **TWO_FIELDS, "permit.status": "pending"}))
    d.gate("north", local(11), 300, 0)
    d.gate("south", local(11), 201, 0)  # neither field alone holds more than 500
    assert d.holds("permit-required")


def test_an_engine_without_properties_in_the_file_has_one() -> None:
    engine = Engine(permit_variant(QUICK))
    status = engine.status()
    assert list(status.properties) == ["main"]
    assert status.properties["main"].owner == "R. Smith"
    assert status.ts is None
    assert status.assembly.on is False
    assert status.permit.since is None


# -- housing only where the night was contemplated ---------------------------------------------


def test_a_crowd_leaving_across_midnight_is_dispersing_not_overnight() -> None:
    """The window ends 23:30; 900 leave slowly past midnight, nobody admitted: the hour to
    disperse is a warning, and no midnight inside a window ever passed, so no housing."""
    d = Driver(permit_variant(QUICK))
    d.staff(local(9), doctors=1, nurses=10, security=20)
    d.present(900, local(23))
    d.tick(local(23, 30))
    d.present(800, local(23, 50))
    d.present(600, local(0, 5, day=5))
    d.tick(local(0, 20, day=5))
    assert d.alerts("overnight-housing") == []
    (leaving,) = d.alerts("dispersing")
    assert when(leaving["since"]) == local(23, 30)
    d.tick(local(0, 40, day=5))  # the allowance is over at 00:30 with 600 still present
    (late,) = d.alerts("permit-required")
    assert when(late["since"]) == local(0, 30, day=5)
    assert d.alerts("overnight-housing") == []


def test_an_overrun_past_midnight_of_an_overnight_permit_is_no_housing_breach() -> None:
    """A permit declared overnight whose windows close at 23:30 each day: a crowd staying
    past midnight is outside every window, an overrun (permit-required), nothing more."""
    windows = [
        {"start": local(10), "end": local(23, 30)},
        {"start": local(10, day=5), "end": local(23, 30, day=5)},
    ]
    d = Driver(permit_variant({**QUICK, "windows": windows, "facilities.overnight": True}))
    d.staff(local(9), doctors=1, nurses=10, security=20)
    d.present(900, local(23))
    d.tick(local(3, day=5))
    assert d.alerts("overnight-housing") == []
    assert [when(a["since"]) for a in d.alerts("permit-required")] == [local(0, 30, day=5)]
    d.tick(local(10, 30, day=5))  # the second window opens with the crowd still there
    assert d.alerts("overnight-housing") == []


def test_a_two_day_festival_that_closes_overnight_needs_no_housing() -> None:
    windows = [
        {"start": local(10), "end": local(23, 30)},
        {"start": local(10, day=5), "end": local(23, 30, day=5)},
    ]
    d = Driver(permit_variant({**QUICK, "windows": windows}))
    d.staff(local(9), doctors=1, nurses=10, security=20)
    d.present(2_000, local(12))
    d.present(0, local(23, 20))
    d.present(2_000, local(12, day=5))
    d.present(0, local(23, 20, day=5))
    d.tick(local(1, day=6))
    assert d.alerts("overnight-housing") == []
