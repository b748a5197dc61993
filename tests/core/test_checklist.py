"""Which facilities checklist items apply to a permit (permit:C, D, F).

Housing (C(7)) applies whenever the assembly may run from one day into another;
food (C(5)) applies to every assembly, food served or not.
"""

from __future__ import annotations

from datetime import datetime

from core_support import NY, WINDOW_START, permit_variant

from kent_ops.core.checklist import CHECKLIST, applicable_items


def items(changes: dict[str, object] | None = None) -> list[str]:
    return [it.item for it in applicable_items(permit_variant(changes))]


def test_every_item_but_housing_applies_to_a_day_assembly() -> None:
    assert items() == [it.item for it in CHECKLIST if it.item != "C(7)"]


def test_food_applies_even_when_no_food_is_served() -> None:
    assert "C(5)" in items({"facilities.food_served": False})


def test_housing_applies_when_declared_overnight() -> None:
    assert items({"facilities.overnight": True}) == [it.item for it in CHECKLIST]


def test_housing_applies_when_a_window_crosses_local_midnight() -> None:
    late = {"start": WINDOW_START, "end": datetime(2027, 7, 5, 0, 30, tzinfo=NY)}
    assert "C(7)" in items({"windows": [late], "facilities.housing_declared": True})


def test_housing_does_not_apply_to_a_window_ending_at_midnight() -> None:
    at_midnight = {"start": WINDOW_START, "end": datetime(2027, 7, 5, 0, 0, tzinfo=NY)}
    assert "C(7)" not in items({"windows": [at_midnight]})
