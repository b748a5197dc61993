"""Scenarios are data: the built-ins and the example load, and a bad file lists its problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from kent_ops.core.permit import Permit
from sensors.scenario.file import load_scenario, parse_scenario
from sensors.scenario.model import BUILTIN_SCENARIOS, ScenarioError, TimeExpr

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenario.toml"


@pytest.mark.parametrize("name", BUILTIN_SCENARIOS)
def test_builtin_scenarios_load(name: str) -> None:
    scenario = load_scenario(name)
    assert scenario.name == name
    assert scenario.phases
    assert scenario.heartbeat_s <= 30


def test_the_example_scenario_loads_from_a_path() -> None:
    scenario = load_scenario(EXAMPLE)
    assert scenario.name == "county-fair"
    assert scenario.units == "persons"
    assert scenario.gate_weights == {"north": 2.0, "south": 1.0}
    assert scenario.surge is not None
    assert scenario.surge.peak == 1400


def test_an_unknown_name_is_refused_with_the_choices() -> None:
    with pytest.raises(ScenarioError, match="festival, quiet, faults"):
        load_scenario("carnival")


def test_times_read_like_a_schedule(example_permit: Permit) -> None:
    span = 13.5 * 3600
    pending = example_permit.alerting.pending_s
    assert TimeExpr.parse("2:30").seconds(span, example_permit) == 9000
    assert TimeExpr.parse("0:00:05").seconds(span, example_permit) == 5
    assert TimeExpr.parse("-0:10").seconds(span, example_permit) == -600
    assert TimeExpr.parse("40%").seconds(span, example_permit) == pytest.approx(0.4 * span)
    assert TimeExpr.parse("end").seconds(span, example_permit) == span
    assert TimeExpr.parse("36% + 0:21 + pending").seconds(span, example_permit) == (
        pytest.approx(0.36 * span + 1260 + pending)
    )
    assert TimeExpr.parse("end - 0:30").seconds(span, example_permit) == span - 1800


@pytest.mark.parametrize("text", ["", "noon", "2:75", "10% 0:10", "1:00 +", "x%"])
def test_unreadable_times_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="time|join|under 60"):
        TimeExpr.parse(text)


def test_a_bad_scenario_lists_every_problem() -> None:
    text = """
[scenario]
units = "people"
step_s = 0

[[crowd.phases]]
from = "soon"
to = "1:00"
arrive = -3

[[shifts]]
role = "janitor"
count = "lots"
on = "0:00"

[[faults]]
kind = "earthquake"
at = "1:00"

[[faults]]
kind = "malformed"
at = "1:00"
what = ["bad-json", "rude"]
"""
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "mine.toml")
    problems = "\n".join(caught.value.problems)
    for needle in (
        "scenario.units",
        "scenario.step_s",
        "crowd.phases[0].from",
        "crowd.phases[0].arrive",
        "shifts[0].role",
        "shifts[0].count",
        "faults[0].kind",
        "faults[1].what",
    ):
        assert needle in problems
    assert str(caught.value).startswith("mine.toml is invalid: ")


def test_toml_syntax_errors_are_reported() -> None:
    with pytest.raises(ScenarioError, match="TOML syntax"):
        parse_scenario("[scenario\n")


def test_shift_headcount_follows_the_permit(example_permit: Permit) -> None:
    shifts = {(s.role, s.count): s for s in load_scenario("festival").shifts}
    assert shifts[("nurse", "permit+1")].headcount(example_permit) == 9  # 4000/500 + 1
    assert shifts[("doctor", "permit")].headcount(example_permit) == 1
    assert shifts[("security", "permit")].headcount(example_permit) == 20
