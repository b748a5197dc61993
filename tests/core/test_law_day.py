"""A scripted day the law is read on: set-up crew, a mid-morning revocation, two properties
and drift after close give exactly the expected alerts, to the second.

One assembly over a main field and a camping meadow (examples/permit-two-properties.toml,
with a daytime window): the crew before opening and the three counts of drift after close
are not the assembly; the Clerk's revocation takes effect at its instant, and the crowd,
leaving within the hour it has to disperse with nobody admitted, is a warning, not an
assembly without a permit; the 500 threshold applies to the aggregate of both properties.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from core_support import Driver
from wire_support import clerk_permit

from kent_ops.core.permit import parse_permit

ROOT = Path(__file__).resolve().parents[2]
KENT = ZoneInfo("America/New_York")
WINDOW = "[[windows]]\nstart = 2027-08-14T10:00:00-04:00\nend = 2027-08-14T23:30:00-04:00\n"


def at(hour: int, minute: int = 0, second: int = 0, *, day: int = 14) -> datetime:
    return datetime(2027, 8, day, hour, minute, second, tzinfo=KENT)


def two_field_permit() -> Any:
    text = (ROOT / "examples" / "permit-two-properties.toml").read_text()
    start = text.index("[[windows]]")
    end = text.index("[limits]")
    text = text[:start] + WINDOW + "\n" + text[end:]
    text += "\n[alerting]\npending_s = 10\nclear_s = 30\nstale_after_s = 864000\n"
    return parse_permit(text)


def clerk(d: Driver, t: datetime, status: str, resolution: str) -> None:
    sent = t - timedelta(minutes=15)  # decided ahead, effective at its instant
    body = clerk_permit(sent, status, t, resolution, "no doctor on site")
    result = d.feed(d.topics.clerk_permit("clerk-1"), body, sent)
    assert result.accepted, result.reason


@pytest.fixture(scope="module")
def day() -> Driver:
    d = Driver(two_field_permit())
    d.gate("north", at(8, 45), 20, 0)  # the set-up crew, before the gates open
    d.tick(at(9, 30))
    d.staff(at(9, 30), doctors=1, nurses=2, security=24)
    d.tick(at(10, 0))  # the window opens with the crew inside: the assembly is on
    d.gate("north", at(10, 30), 1520, 0)
    d.gate("meadow-road", at(10, 30), 400, 0)
    d.gate("field-to-meadow", at(10, 30), 200, 0)  # 200 walk from the field to the meadow
    d.tick(at(10, 45))
    d.snapshot_1045 = d.status()  # type: ignore[attr-defined]
    clerk(d, at(11, 15), "revoked", "TB-2027-41")
    d.tick(at(11, 30))
    d.snapshot_1130 = d.status()  # type: ignore[attr-defined]
    d.gate("north", at(11, 45), 1520, 1470)  # most of the field leaves: 450 in all
    clerk(d, at(12, 0), "issued", "TB-2027-42")
    d.gate("meadow-road", at(23, 29), 400, 397)
    d.gate("field-to-meadow", at(23, 29), 200, 200)
    d.gate("north", at(23, 29), 1520, 1520)  # three counts of drift remain on the meadow
    d.tick(at(23, 30))
    d.staff(at(23, 40), doctors=0, nurses=0, security=0)
    d.tick(at(3, 0, day=15))
    return d


def test_exactly_the_expected_alerts_to_the_second(day: Driver) -> None:
    got = [
        (a["id"], a["rule"], a["since"], a["raised_at"], a["ended_at"], a["cleared_at"])
        for a in day.alerts()
    ]

    def t(*args: int, **kw: int) -> str:
        return at(*args, **kw).astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%dT%H:%M:%SZ")

    assert got == [
        ("A-0001", "nurse-ratio", t(10, 30), t(10, 30, 10), t(11, 45), t(11, 45, 30)),
        ("A-0002", "dispersing", t(11, 15), t(11, 15, 10), t(11, 45), t(11, 45, 30)),
    ]


def test_the_crew_and_the_drift_are_not_the_assembly(day: Driver) -> None:
    rules = {a["rule"] for a in day.alerts()}
    assert not rules & {"doctor-on-duty", "parking-ratio", "overnight-housing"}
    assert day.status()["assembly"]["on"] is False
    assert day.status()["attendance"]["current"] == 3


def test_persons_per_property_and_the_aggregate(day: Driver) -> None:
    status = day.snapshot_1045  # type: ignore[attr-defined]
    assert status["attendance"]["current"] == 1920
    assert status["attendance"]["entries"] == 1920  # the walk to the meadow is no entry
    props = status["properties"]
    assert props["main-field"]["attendance"] == 1320
    assert props["camping-meadow"]["attendance"] == 600
    assert props["camping-meadow"]["tenant"] == "Lakeside Camping Co."
    assert props["overflow-parking"]["attendance"] == 0


def test_the_revocation_holds_every_gate_and_names_its_resolution(day: Driver) -> None:
    status = day.snapshot_1130  # type: ignore[attr-defined]
    assert status["permit"]["status"] == "revoked"
    assert status["permit"]["resolution"] == "TB-2027-41"
    assert status["admit"] is False
    final = day.status()["permit"]
    assert (final["status"], final["resolution"]) == ("issued", "TB-2027-42")
