"""Assemblies over several properties: [[properties]], and the property each sensor is on.

permit:A counts the assembly "in the aggregate" over every property it uses; each
owner (and tenant) answers for their part, so the permit names every property and the
property each gate, lot and staff station stands on.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from core_support import EXAMPLE_TEXT, permit_variant, to_toml

from kent_ops.core.permit import GateSpec, Permit, PermitError, Property, load_permit, parse_permit

TWO_PATH = Path(__file__).resolve().parents[2] / "examples" / "permit-two-properties.toml"


def two_data() -> dict[str, Any]:
    return tomllib.loads(TWO_PATH.read_text(encoding="utf-8"))


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(PermitError) as caught:
        parse_permit(to_toml(data))
    return caught.value.problems


def only(data: dict[str, Any]) -> str:
    found = problems(data)
    assert len(found) == 1, found
    return found[0]


# -- the example over three properties ---------------------------------------------------------


def test_the_three_property_example_loads_with_its_api() -> None:
    permit = load_permit(TWO_PATH)
    assert [p.id for p in permit.properties] == ["main-field", "overflow-parking", "camping-meadow"]
    meadow = permit.properties[2]
    assert meadow == Property(
        id="camping-meadow",
        owner="Kent Grange Association",
        address="30 Farmers Mills Rd, Kent NY",
        tenant="Lakeside Camping Co.",
        inspection_authorized=True,
        tenant_authorized=True,
    )
    assert list(permit.gate_specs) == ["north", "south", "meadow-road", "field-to-meadow"]
    assert permit.gates == ("north", "south", "meadow-road", "field-to-meadow")
    assert permit.gate_specs["north"] == GateSpec("north", False, "main-field", None, None)
    inner = permit.gate_specs["field-to-meadow"]
    assert inner == GateSpec("field-to-meadow", False, None, "main-field", "camping-meadow")
    assert [g.boundary for g in permit.gate_specs.values()] == [True, True, True, False]
    assert permit.lot_property == {"lot-a": "main-field", "overflow": "overflow-parking"}
    assert permit.station_property == {"first-aid": "main-field", "camp-aid": "camping-meadow"}
    assert permit.may_run_overnight is True
    assert permit.property_owner == "R. Smith"
    assert permit.property_address == "400 Route 52, Kent NY"


def test_one_property_table_is_one_property_called_main() -> None:
    permit = permit_variant()
    (prop,) = permit.properties
    assert (prop.id, prop.owner, prop.tenant, prop.tenant_authorized) == (
        "main",
        "R. Smith",
        None,
        False,
    )
    assert prop.inspection_authorized is True  # from [facilities] inspection_authorized
    assert {g.property for g in permit.gate_specs.values()} == {"main"}
    assert permit.lot_property == {"lot-a": "main", "lot-b": "main"}
    assert permit.station_property == {"first-aid": "main"}
    assert permit.gate_specs["north-manual"].manual is True


def test_one_property_table_may_name_its_id_and_tenant() -> None:
    permit = permit_variant(
        {
            "property.id": "smith-farm",
            "property.tenant": "Kent Fair Inc.",
            "property.tenant_authorized": True,
        }
    )
    (prop,) = permit.properties
    assert (prop.id, prop.tenant, prop.tenant_authorized) == ("smith-farm", "Kent Fair Inc.", True)
    assert permit.lot_property["lot-a"] == "smith-farm"


def test_a_sensor_may_name_the_single_property() -> None:
    lots = [{"id": "lot-a", "capacity": 600, "property": "main"}, {"id": "lot-b", "capacity": 450}]
    assert permit_variant({"lots": lots}).lot_property == {"lot-a": "main", "lot-b": "main"}


def test_a_sensor_naming_another_property_of_a_single_property_file_is_refused() -> None:
    lots = [{"id": "lot-a", "capacity": 600, "property": "mian"}, {"id": "lot-b", "capacity": 450}]
    with pytest.raises(PermitError) as caught:
        permit_variant({"lots": lots})
    assert caught.value.problems == [
        "lots[0].property: unknown property 'mian' (did you mean main?)"
    ]


def test_inspection_authorization_defaults_to_the_facilities_value() -> None:
    data = two_data()
    data["facilities"]["inspection_authorized"] = False
    del data["properties"][1]["inspection_authorized"]
    permit = parse_permit(to_toml(data))
    assert [p.inspection_authorized for p in permit.properties] == [True, False, True]


def test_the_facilities_value_fills_a_property_that_says_nothing() -> None:
    data = two_data()
    data["facilities"]["inspection_authorized"] = True
    data["properties"][1]["inspection_authorized"] = False
    del data["properties"][0]["inspection_authorized"]
    permit = parse_permit(to_toml(data))
    assert [p.inspection_authorized for p in permit.properties] == [True, False, True]


# -- what is refused -----------------------------------------------------------------------------


def test_a_property_id_listed_twice_is_refused() -> None:
    data = two_data()
    data["properties"][2]["id"] = "main-field"
    found = problems(data)
    assert "properties[2].id: 'main-field' is listed twice" in found


def test_a_property_id_must_be_lowercase_letters_digits_and_dashes() -> None:
    data = two_data()
    data["properties"][1]["id"] = "Overflow Parking"
    data["lots"][1]["property"] = "Overflow Parking"
    found = problems(data)
    assert found[0] == "properties[1].id: must match [a-z0-9-]+"


def test_a_property_needs_its_owner_and_address() -> None:
    data = two_data()
    del data["properties"][1]["owner"]
    assert only(data) == "properties[1].owner: missing (permit:B(2))"


def test_a_typo_in_a_property_key_is_named() -> None:
    data = two_data()
    data["properties"][2]["tennant"] = data["properties"][2].pop("tenant")
    found = problems(data)
    assert "properties[2].tennant: unknown field (did you mean tenant?)" in found


def test_every_sensor_must_name_its_property_when_there_are_several() -> None:
    data = two_data()
    del data["gates"][0]["property"]
    del data["lots"][1]["property"]
    del data["staff_stations"][0]["property"]
    assert sorted(problems(data)) == [
        "gates[0].property: missing; with [[properties]] every gate names its property (permit:A)",
        "lots[1].property: missing; with [[properties]] every lot names its property (permit:A)",
        "staff_stations[0].property: missing; with [[properties]] every station names its "
        "property (permit:A)",
    ]


def test_a_sensor_on_an_unknown_property_is_refused_with_a_suggestion() -> None:
    data = two_data()
    data["lots"][1]["property"] = "overflow-parkng"
    assert only(data) == (
        "lots[1].property: unknown property 'overflow-parkng' (did you mean overflow-parking?)"
    )


def test_an_internal_gate_must_join_two_different_properties() -> None:
    data = two_data()
    data["gates"][3]["to"] = "main-field"
    assert only(data) == "gates[3].to: must differ from from ('main-field')"


def test_an_internal_gate_needs_both_ends() -> None:
    data = two_data()
    del data["gates"][3]["to"]
    assert only(data) == "gates[3].to: missing; a gate between two properties names from and to"


def test_an_internal_gate_end_must_be_a_known_property() -> None:
    data = two_data()
    data["gates"][3]["from"] = "main"
    assert only(data) == "gates[3].from: unknown property 'main'"


def test_a_gate_cannot_be_on_a_boundary_and_between_two() -> None:
    data = two_data()
    data["gates"][3]["property"] = "main-field"
    assert only(data).startswith("gates[3]: names a property and from/to")


def test_at_least_one_gate_is_on_the_boundary() -> None:
    data = two_data()
    data["gates"] = [data["gates"][3]]
    assert only(data) == (
        "[[gates]]: at least one gate must be on the assembly's boundary (name its property) "
        "(permit:A)"
    )


def test_a_single_property_cannot_have_an_internal_gate() -> None:
    gates = [{"id": "north"}, {"id": "inner", "from": "main", "to": "main"}]
    with pytest.raises(PermitError) as caught:
        permit_variant({"gates": gates})
    assert caught.value.problems == ["gates[1].to: must differ from from ('main')"]


def test_not_both_one_property_and_several() -> None:
    data = two_data()
    data["property"] = {"owner": "R. Smith", "address": "400 Route 52, Kent NY"}
    assert only(data) == (
        "[[properties]]: give one [property] table or [[properties]], not both (permit:B(2))"
    )


def test_no_property_at_all_is_refused() -> None:
    data = tomllib.loads(EXAMPLE_TEXT)
    del data["property"]
    assert only(data).startswith("[property]: missing table")


def test_a_sensor_id_listed_twice_across_kinds_is_still_refused() -> None:
    data = two_data()
    data["staff_stations"][1]["id"] = "overflow"
    assert only(data) == "overflow: sensor id listed twice (gates, lots and stations share ids)"


def test_permit_records_are_frozen(tmp_path: Path) -> None:
    permit: Permit = load_permit(TWO_PATH)
    with pytest.raises(AttributeError):
        permit.properties[0].owner = "someone else"  # type: ignore[misc]
