"""A notice says what is wrong, the law, when (the event's zone, to the second) and where."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import msgspec

from kent_ops.core import wire
from kent_ops.notify.message import compose, local_time

KENT = ZoneInfo("America/New_York")
T = datetime(2027, 7, 4, 14, 3, 5, 120_000, tzinfo=UTC)  # 10:03:05.12 in Kent
NURSES = wire.Alert(
    id="A-0004",
    rule="nurse-ratio",
    cite="permit:C(9)",
    severity="breach",
    state="active",
    since=T,
    raised_at=T + timedelta(seconds=30),
    message="6 nurses on duty; 3,120 persons need 7 (permit:C(9))",
)


def test_a_raised_breach() -> None:
    notice = compose(NURSES, event_name="Kent Fest", tz=KENT, dashboard="https://cp.example/")
    assert notice.title == (
        "Kent Fest: BREACH A-0004 Registered nurses per persons present (permit:C(9))"
    )
    assert notice.body.splitlines() == [
        "6 nurses on duty; 3,120 persons need 7 (permit:C(9))",
        "Alert A-0004, breach, permit:C(9).",
        "Since 2027-07-04 10:03:05 EDT (raised at 10:03:35).",
        "Dashboard: https://cp.example/",
    ]


def test_its_end() -> None:
    ended = msgspec.structs.replace(
        NURSES, state="cleared", ended_at=T + timedelta(minutes=20),
        cleared_at=T + timedelta(minutes=21),
    )  # fmt: skip
    notice = compose(ended, event_name="Kent Fest", tz=KENT, dashboard="")
    assert notice.title.startswith("Kent Fest: ended: breach A-0004")
    assert notice.body.splitlines() == [
        "Ended: 6 nurses on duty; 3,120 persons need 7 (permit:C(9))",
        "Alert A-0004, breach, permit:C(9).",
        "Held from 2027-07-04 10:03:05 EDT to 10:23:05; cleared at 10:24:05.",
    ]  # no dashboard configured: no line for it


def test_a_per_lot_warning_names_its_lot_and_an_uncertain_one_says_so() -> None:
    lot = wire.Alert(
        id="A-0009", rule="lot-full", subject="lot-a", cite="permit:C(4)", severity="warning",
        since=T, raised_at=T, message="lot-a is 96% full", uncertain=True,
    )  # fmt: skip
    notice = compose(lot, event_name="Kent Fest", tz=KENT, dashboard="")
    assert "Warning A-0009" in notice.title
    assert "(lot-a)" in notice.title
    assert "Its figures are indeterminate (a sensor was offline or silent)" in notice.body


def test_an_unknown_rule_is_named_as_it_is() -> None:
    newer = wire.Alert(id="A-0100", rule="a-rule-of-a-newer-aggregator", severity="data", since=T)
    title = compose(newer, event_name="E", tz=KENT, dashboard="").title
    assert title == "E: Data A-0100 a-rule-of-a-newer-aggregator"


def test_local_time_is_the_events_wall_clock_to_the_second() -> None:
    winter = datetime(2027, 1, 2, 3, 4, 5, 999_000, tzinfo=UTC)
    assert local_time(T, KENT) == "2027-07-04 10:03:05 EDT"
    assert local_time(winter, KENT) == "2027-01-01 22:04:05 EST"
    assert local_time(None, KENT) == "?"
