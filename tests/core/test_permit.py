"""The permit file: loaded into frozen objects, every problem listed at once."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from core_support import (
    DELETE,
    EXAMPLE_PATH,
    EXAMPLE_TEXT,
    NY,
    WINDOW_END,
    WINDOW_START,
    permit_text,
    permit_variant,
)

from kent_ops.core.permit import PermitError, load_permit, local_midnight_after, parse_permit
from kent_ops.core.wire import Topics


def problems_of(changes: dict[str, Any]) -> list[str]:
    with pytest.raises(PermitError) as caught:
        permit_variant(changes)
    return caught.value.problems


def only_problem(changes: dict[str, Any]) -> str:
    problems = problems_of(changes)
    assert len(problems) == 1, problems
    return problems[0]


def test_the_example_permit_is_valid() -> None:
    permit = load_permit(EXAMPLE_PATH)
    assert permit.event_id == "kent-summer-fest-2027"
    assert permit.timezone.key == "America/New_York"
    assert permit.status == "issued"
    assert permit.number == "MG-2027-003"
    assert permit.gates == ("north", "south", "north-manual")
    assert permit.manual_gates == frozenset({"north-manual"})
    assert permit.lots == {"lot-a": 600, "lot-b": 450}
    assert permit.spaces_provided == 1050
    assert permit.staff_stations == ("first-aid",)
    assert permit.persons_per_nurse == 500
    assert permit.doctors_min == 1
    assert permit.max_at_one_time == 4000
    assert permit.alerting.pending_s == 10
    assert permit.alerting.clear_s == 30
    assert permit.alerting.stale_after_s == 60
    assert (permit.alerting.hold_at, permit.alerting.resume_below) == (4000, 3960)
    assert permit.windows[0].start == WINDOW_START
    assert permit.windows[0].end == WINDOW_END
    assert permit.topic_prefix == Topics("kent-summer-fest-2027").prefix
    assert permit.application_filed_on == date(2027, 4, 1)
    assert permit.source_path == EXAMPLE_PATH


def test_the_permit_is_frozen() -> None:
    permit = load_permit(EXAMPLE_PATH)
    with pytest.raises(dataclasses.FrozenInstanceError):
        permit.status = "revoked"  # type: ignore[misc]


def test_sensors_map_every_listed_id_to_its_kind() -> None:
    assert load_permit(EXAMPLE_PATH).sensors == {
        "north": "gate",
        "south": "gate",
        "north-manual": "gate",
        "lot-a": "lot",
        "lot-b": "lot",
        "first-aid": "station",
    }


def test_a_looser_nurse_ratio_is_refused_naming_field_and_section() -> None:
    text = EXAMPLE_TEXT.replace("persons_per_nurse = 500", "persons_per_nurse = 600")
    assert text != EXAMPLE_TEXT
    with pytest.raises(PermitError) as caught:
        parse_permit(text)
    (problem,) = caught.value.problems
    assert problem.startswith("staffing.persons_per_nurse:")
    assert "permit:C(9)" in problem
    assert "600" in problem
    assert "staffing.persons_per_nurse" in str(caught.value)


def test_a_stricter_nurse_ratio_is_accepted() -> None:
    assert permit_variant({"staffing.persons_per_nurse": 250}).persons_per_nurse == 250


def test_no_doctor_is_refused() -> None:
    problem = only_problem({"staffing.doctors_min": 0})
    assert problem.startswith("staffing.doctors_min:")
    assert "permit:C(9)" in problem


def test_more_doctors_than_the_law_asks_is_accepted() -> None:
    assert permit_variant({"staffing.doctors_min": 2}).doctors_min == 2


def test_every_problem_is_listed_at_once() -> None:
    problems = problems_of(
        {
            "staffing.persons_per_nurse": 600,
            "staffing.doctors_min": 0,
            "event.timezone": "Mars/Olympus_Mons",
            "permit.status": "maybe",
        }
    )
    fields = sorted(p.split(":", 1)[0] for p in problems)
    assert fields == [
        "event.timezone",
        "permit.status",
        "staffing.doctors_min",
        "staffing.persons_per_nurse",
    ]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("limits.max_at_one_time", "4000", "limits.max_at_one_time: must be a whole number"),
        ("limits.max_at_one_time", 4000.5, "limits.max_at_one_time: must be a whole number"),
        ("limits.max_at_one_time", True, "limits.max_at_one_time: must be a whole number"),
        ("staffing.security_guards", -1, "staffing.security_guards: must not be negative"),
        ("facilities.housing_declared", "no", "facilities.housing_declared: must be true or"),
        ("permit.application_filed_on", "2027-04-01", "permit.application_filed_on: must be a"),
        ("event.name", 7, "event.name: must be a string"),
        ("event.id", "Kent Fest", "event.id: must match [a-z0-9-]+"),
        ("alerting.pending_s", -1, "alerting.pending_s: must not be negative"),
        ("alerting.stale_after_s", 0, "alerting.stale_after_s: must be more than 0"),
    ],
)
def test_wrong_types_and_values_are_named(field: str, value: Any, expected: str) -> None:
    assert only_problem({field: value}).startswith(expected)


def test_a_datetime_where_a_date_belongs_is_refused() -> None:
    problem = only_problem({"permit.decided_on": datetime(2027, 4, 29, 12, 0, tzinfo=UTC)})
    assert problem.startswith("permit.decided_on: must be a date")


def test_a_missing_required_field_is_named() -> None:
    problem = only_problem({"limits.max_at_one_time": DELETE})
    assert problem == "limits.max_at_one_time: missing (permit:B(2))"


def test_a_missing_table_is_named() -> None:
    assert "[limits]: missing table" in problems_of({"limits": DELETE})


@pytest.mark.parametrize("zone", ["America/Kent", "UTC", "America/Chicago"])
def test_a_time_zone_other_than_new_yorks_is_refused(zone: str) -> None:
    problem = only_problem({"event.timezone": zone})
    assert problem == (
        f"event.timezone: must be America/New_York: the Town of Kent is in New York, not {zone!r}"
    )


def test_a_window_without_an_offset_is_refused() -> None:
    text = EXAMPLE_TEXT.replace("start = 2027-07-04T10:00:00-04:00", "start = 2027-07-04T10:00:00")
    assert text != EXAMPLE_TEXT
    with pytest.raises(PermitError) as caught:
        parse_permit(text)
    (problem,) = caught.value.problems
    assert problem.startswith("windows[0].start: needs an offset")


@pytest.mark.parametrize("end", ["2027-07-04T09:00:00-04:00", "2027-07-04T10:00:00-04:00"])
def test_a_window_ending_at_or_before_its_start_is_refused(end: str) -> None:
    text = EXAMPLE_TEXT.replace("end = 2027-07-04T23:30:00-04:00", f"end = {end}")
    with pytest.raises(PermitError) as caught:
        parse_permit(text)
    (problem,) = caught.value.problems
    assert problem.startswith("windows[0].end: must be after its start")


def test_overlapping_windows_are_refused() -> None:
    windows = [
        {"start": WINDOW_START, "end": WINDOW_END},
        {"start": WINDOW_END - timedelta(hours=1), "end": WINDOW_END + timedelta(hours=1)},
    ]
    assert only_problem({"windows": windows}).startswith("[[windows]]: windows overlap")


def test_no_window_is_refused() -> None:
    assert only_problem({"windows": DELETE}).startswith("[[windows]]: at least one")


def test_windows_are_held_in_order() -> None:
    later = {"start": WINDOW_START + timedelta(days=1), "end": WINDOW_END + timedelta(days=1)}
    permit = permit_variant({"windows": [later, {"start": WINDOW_START, "end": WINDOW_END}]})
    assert [w.start for w in permit.windows] == [WINDOW_START, later["start"]]
    assert permit.first_start == WINDOW_START
    assert permit.last_end == later["end"]


def test_an_unknown_status_is_refused() -> None:
    problem = only_problem({"permit.status": "approved"})
    assert problem.startswith("permit.status: must be one of issued, pending, denied")
    assert "permit:A" in problem


@pytest.mark.parametrize("status", ["issued", "pending", "denied", "revoked", "none"])
def test_every_known_status_loads(status: str) -> None:
    assert permit_variant({"permit.status": status}).status == status


def test_hold_at_above_the_permitted_maximum_is_refused() -> None:
    problem = only_problem({"alerting.hold_at": 4001, "alerting.resume_below": 3000})
    assert problem.startswith("alerting.hold_at:")


def test_resume_below_above_hold_at_is_refused() -> None:
    assert only_problem({"alerting.resume_below": 4001}).startswith("alerting.resume_below:")


def test_hold_defaults_to_the_maximum_and_resume_to_99_percent() -> None:
    permit = permit_variant({"alerting.hold_at": DELETE, "alerting.resume_below": DELETE})
    assert permit.alerting.hold_at == 4000
    assert permit.alerting.resume_below == 3960


def test_a_sensor_id_listed_twice_is_refused() -> None:
    lots = [{"id": "north", "capacity": 10}]
    assert only_problem({"lots": lots}).startswith("north: sensor id listed twice")


def test_a_manual_gate_is_known_by_its_suffix_or_flag() -> None:
    gates = [{"id": "north"}, {"id": "east-manual"}, {"id": "tally", "manual": True}]
    assert permit_variant({"gates": gates}).manual_gates == frozenset({"east-manual", "tally"})


def test_a_toml_syntax_error_is_a_permit_error() -> None:
    with pytest.raises(PermitError) as caught:
        parse_permit(EXAMPLE_TEXT + "\n[limits\n")
    assert caught.value.problems[0].startswith("TOML syntax")


def test_a_missing_file_is_a_permit_error(tmp_path: Path) -> None:
    with pytest.raises(PermitError, match="no such file"):
        load_permit(tmp_path / "absent.toml")


def test_a_permit_file_that_cannot_be_read_is_one_sentence_naming_it_once(
    tmp_path: Path,
) -> None:
    absent, latin = tmp_path / "absent.toml", tmp_path / "latin.toml"
    latin.write_bytes("name = 'Caf\u00e9'".encode("latin-1"))
    for path, sentence in (
        (absent, f"permit file {absent}: no such file"),
        (tmp_path, f"permit file {tmp_path}: is a folder, not a file"),
        (latin, f"permit file {latin}: is not UTF-8 text"),
    ):
        with pytest.raises(PermitError) as caught:
            load_permit(path)
        assert str(caught.value) == sentence
        assert str(caught.value).count(str(path)) == 1


def test_a_permit_round_trips_through_the_helper() -> None:
    """The helper's TOML writer must not itself change the permit."""
    a = parse_permit(EXAMPLE_TEXT)
    b = parse_permit(permit_text())
    assert dataclasses.replace(a, raw={}) == dataclasses.replace(b, raw={})


def test_window_inside_means_start_inclusive_end_exclusive() -> None:
    window = load_permit(EXAMPLE_PATH).windows[0]
    step = timedelta(microseconds=1)
    assert not window.contains(WINDOW_START - step)
    assert window.contains(WINDOW_START)
    assert window.contains(WINDOW_END - step)
    assert not window.contains(WINDOW_END)


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        (datetime(2027, 7, 4, 23, 0, tzinfo=NY), datetime(2027, 7, 5, 4, 0, tzinfo=UTC)),
        # 20:30 local is already past midnight UTC: the next local midnight is still 04:00 Z.
        (datetime(2027, 7, 4, 20, 30, tzinfo=NY), datetime(2027, 7, 5, 4, 0, tzinfo=UTC)),
        # exactly at midnight: strictly after, so the next day's
        (datetime(2027, 7, 5, 0, 0, tzinfo=NY), datetime(2027, 7, 6, 4, 0, tzinfo=UTC)),
        # the nights the clocks change: EST before spring-forward, EDT before fall-back
        (datetime(2027, 3, 13, 22, 0, tzinfo=NY), datetime(2027, 3, 14, 5, 0, tzinfo=UTC)),
        (datetime(2027, 3, 14, 12, 0, tzinfo=NY), datetime(2027, 3, 15, 4, 0, tzinfo=UTC)),
        (datetime(2027, 11, 6, 22, 0, tzinfo=NY), datetime(2027, 11, 7, 4, 0, tzinfo=UTC)),
        (datetime(2027, 11, 7, 12, 0, tzinfo=NY), datetime(2027, 11, 8, 5, 0, tzinfo=UTC)),
    ],
)
def test_local_midnight_after_is_in_the_event_zone(t: datetime, expected: datetime) -> None:
    assert local_midnight_after(t, NY) == expected


# -- unknown keys ----------------------------------------------------------------------------


def test_a_typoed_key_names_the_field_meant() -> None:
    problem = only_problem({"staffing.persons_per_nurs": 500})
    assert problem == "staffing.persons_per_nurs: unknown field (did you mean persons_per_nurse?)"


def test_an_unknown_key_with_nothing_close_is_named_alone() -> None:
    assert only_problem({"limits.zebra": 1}) == "limits.zebra: unknown field"


def test_an_unknown_table_names_the_table_meant() -> None:
    problem = only_problem({"staffng": {"doctors_min": 1}})
    assert problem == "[staffng]: unknown table (did you mean [staffing]?)"


def test_an_unknown_list_of_tables_names_the_list_meant() -> None:
    problem = only_problem({"gate": [{"id": "west"}]})
    assert problem == "[[gate]]: unknown table (did you mean [[gates]]?)"


def test_an_unknown_key_inside_a_list_entry_is_named_by_its_index() -> None:
    gates = [{"id": "north"}, {"id": "south", "manul": True}, {"id": "north-manual"}]
    assert only_problem({"gates": gates}) == "gates[1].manul: unknown field (did you mean manual?)"


def test_an_unknown_key_in_the_agent_is_named() -> None:
    agent = {"name": "J. Doe", "address": "12 Main St", "county": "Putnam", "countie": "x"}
    problem = only_problem({"applicant.agent": agent})
    assert problem == "applicant.agent.countie: unknown field (did you mean county?)"


def test_unknown_keys_are_listed_with_every_other_problem() -> None:
    problems = problems_of({"staffing.persons_per_nurs": 500, "staffing.doctors_min": 0})
    assert sorted(p.split(":", 1)[0] for p in problems) == [
        "staffing.doctors_min",
        "staffing.persons_per_nurs",
    ]


# -- the revised sections ----------------------------------------------------------------------


def test_the_example_reads_every_new_section() -> None:
    permit = load_permit(EXAMPLE_PATH)
    assert (permit.doctors_planned, permit.nurses_planned) == (2, 8)
    assert permit.first_aid_station is True
    assert permit.bond_amount_fixed_by_board == 10000
    assert permit.revoked_at is None
    assert permit.revocation_resolution is None
    assert permit.food_served is True
    assert len(permit.application) == 15
    assert permit.application_on_record is True
    assert permit.application["site_map"] is True
    assert permit.application["food_plan"] is True
    assert permit.agent is not None
    assert permit.agent.natural_person is True
    assert permit.dispersal_minutes == 60
    assert (permit.parking_approved, permit.roads_approved, permit.medical_approved) == (
        True, True, True,
    )  # fmt: skip
    assert permit.application["housing_statement"] is False
    assert permit.may_run_overnight is False


def test_an_absent_application_is_not_on_record() -> None:
    permit = permit_variant({"application": DELETE})
    assert len(permit.application) == 15
    assert permit.application_on_record is False
    assert all(value is None for value in permit.application.values())


def test_a_statement_must_be_true_or_false() -> None:
    problem = only_problem({"application.site_map": "yes"})
    assert problem.startswith("application.site_map: must be true or false")
    assert problem.endswith("(permit:B(3))")


def test_planned_medical_figures_are_optional() -> None:
    permit = permit_variant(
        {
            "staffing.doctors_planned": DELETE,
            "staffing.nurses_planned": DELETE,
            "staffing.first_aid_station": DELETE,
        }
    )
    assert (permit.doctors_planned, permit.nurses_planned) == (None, None)
    assert permit.first_aid_station is False


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("staffing.doctors_planned", -1, "staffing.doctors_planned: must not be negative"),
        ("staffing.nurses_planned", 2.5, "staffing.nurses_planned: must be a whole number"),
        ("staffing.first_aid_station", 1, "staffing.first_aid_station: must be true or false"),
        ("bond.amount_fixed_by_board", -5, "bond.amount_fixed_by_board: must not be negative"),
        ("facilities.food_served", "no", "facilities.food_served: must be true or false"),
        ("permit.revoked_at", date(2027, 7, 4), "permit.revoked_at: must be a date-time"),
        ("permit.revocation_resolution", 41, "permit.revocation_resolution: must be a string"),
    ],
)
def test_the_new_fields_name_a_wrong_value(field: str, value: Any, expected: str) -> None:
    assert only_problem({field: value}).startswith(expected)


def test_the_cite_comes_with_the_new_fields() -> None:
    assert only_problem({"staffing.nurses_planned": -1}).endswith("(permit:C(9))")
    assert only_problem({"bond.amount_fixed_by_board": -1}).endswith("(permit:F)")
    assert only_problem({"permit.revoked_at": "soon"}).endswith("(permit:G)")


def test_a_revocation_is_read_with_its_resolution() -> None:
    at = datetime(2027, 7, 4, 15, 0, tzinfo=NY)
    permit = permit_variant({"permit.revoked_at": at, "permit.revocation_resolution": "2027-41"})
    assert permit.revoked_at == at
    assert permit.revocation_resolution == "2027-41"


def test_a_revocation_without_an_offset_is_refused() -> None:
    text = EXAMPLE_TEXT.replace(
        "decided_on = 2027-04-29", "decided_on = 2027-04-29\nrevoked_at = 2027-07-04T15:00:00"
    )
    with pytest.raises(PermitError) as caught:
        parse_permit(text)
    (problem,) = caught.value.problems
    assert problem.startswith("permit.revoked_at: needs an offset")


def test_food_served_defaults_to_true() -> None:
    assert permit_variant({"facilities.food_served": DELETE}).food_served is True


# -- overnight ---------------------------------------------------------------------------------


def _one_window(start: datetime, end: datetime) -> Any:
    return permit_variant({"windows": [{"start": start, "end": end}]})


def test_a_window_crossing_local_midnight_may_run_overnight() -> None:
    permit = _one_window(WINDOW_START, datetime(2027, 7, 5, 0, 30, tzinfo=NY))
    assert permit.overnight is False
    assert permit.may_run_overnight is True


def test_a_window_ending_at_local_midnight_does_not() -> None:
    assert not _one_window(WINDOW_START, datetime(2027, 7, 5, 0, 0, tzinfo=NY)).may_run_overnight


def test_midnight_is_local_not_utc() -> None:
    """20:00-23:30 in Kent crosses midnight UTC but not midnight in Kent."""
    permit = _one_window(datetime(2027, 7, 4, 20, 0, tzinfo=NY), WINDOW_END)
    assert permit.may_run_overnight is False


def test_declared_overnight_may_run_overnight() -> None:
    assert permit_variant({"facilities.overnight": True}).may_run_overnight is True


# -- Kent's clock ---------------------------------------------------------------------------


def _window(start: str, end: str) -> dict[str, Any]:
    return {
        "windows": [{"start": datetime.fromisoformat(start), "end": datetime.fromisoformat(end)}]
    }


def test_a_window_written_with_summer_time_after_the_clocks_go_back_is_refused() -> None:
    problem = only_problem(_window("2027-11-07T10:00:00-04:00", "2027-11-07T22:30:00-05:00"))
    assert problem == "windows[0].start: New York is at -05:00 on 2027-11-07"


def test_a_window_on_the_day_the_clocks_go_back_with_new_yorks_offsets_loads() -> None:
    permit = permit_variant(_window("2027-11-07T01:30:00-04:00", "2027-11-07T22:30:00-05:00"))
    (window,) = permit.windows
    # 01:30 EDT to 22:30 EST: the day has 25 hours, the window 22 of them.
    assert window.end - window.start == timedelta(hours=22)


def test_the_second_0130_on_the_day_the_clocks_go_back_is_new_yorks_too() -> None:
    permit = permit_variant(_window("2027-11-07T01:30:00-05:00", "2027-11-07T22:30:00-05:00"))
    assert permit.windows[0].start.utcoffset() == timedelta(hours=-5)


def test_a_time_the_clocks_skip_is_refused() -> None:
    problem = only_problem(_window("2027-03-14T02:30:00-05:00", "2027-03-14T22:00:00-04:00"))
    assert problem == (
        "windows[0].start: 02:30:00 does not exist in New York on 2027-03-14 "
        "(the clocks go forward an hour)"
    )


def test_an_offset_new_york_never_uses_is_refused_at_either_end() -> None:
    problems = problems_of(_window("2027-07-04T10:00:00+00:00", "2027-07-04T23:30:00-05:00"))
    assert problems == [
        "windows[0].start: New York is at -04:00 on 2027-07-04",
        "windows[0].end: New York is at -04:00 on 2027-07-04",
    ]
