"""What an inspector's page sends, checked before anything is published (pure functions).

Each action becomes the very payload the terminal's dashboard sends, stamped with the
moment it was confirmed on the phone; what the terminal requires (a comment, a reason,
a deficiency's note, the Board's resolution) the page's actions require too, refused
with one sentence. And every tag the core's views use has its style on the terminal
and its class on the page, so a view reads the same on both.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dashboards.common.tagged_text import TAG_STYLES
from kent_ops.core import wire
from kent_ops.core.inspector_actions import encode_action
from kent_ops.core.tagged import TAGS
from kent_ops.web.page_actions import (
    FUTURE_S,
    MOST_ACTIONS,
    PageAction,
    build_payload,
    kind_allowed,
    parse_actions,
    stamp_for,
)

NOW = datetime(2027, 7, 4, 18, 3, 7, 250_000, tzinfo=UTC)
STAMP = "2027-07-04T18:02:59.125Z"
CSS = Path(__file__).resolve().parents[2] / "kent_ops" / "web" / "static" / "inspector.css"


def one(**entry: object) -> PageAction:
    parsed = parse_actions([{"id": "abcdef012345", "ts": STAMP, **entry}])
    assert parsed is not None
    return parsed[0]


def payload(**entry: object) -> wire.Record:
    action = one(**entry)
    return build_payload(action, stamp_for(action, NOW), NOW)


def test_each_kind_becomes_the_dashboards_own_payload_stamped_on_the_phone() -> None:
    ack = payload(kind="ack", alert="A-0002", comment="doctor called")
    assert ack == wire.Ack(ts=datetime(2027, 7, 4, 18, 2, 59, 125_000, tzinfo=UTC),
                           alert="A-0002", comment="doctor called")  # fmt: skip
    assert payload(kind="note", text="exits clear") == wire.Note(ts=ack.ts, text="exits clear")
    about = payload(kind="note", text="called", alert="A-0002")
    assert isinstance(about, wire.Note)
    assert about.alert == "A-0002"
    adjust = payload(kind="adjust", attendance=3120, reason="headcount")
    assert adjust == wire.Adjust(ts=ack.ts, attendance=3120, reason="headcount")
    mark = payload(kind="inspection", item="C(2)(a)", result="deficient", note="locked")
    assert mark == wire.Inspection(ts=ack.ts, item="C(2)(a)", result="deficient", note="locked")
    change = payload(kind="clerk-permit", status="revoked", resolution="TB-41", reason="no doctor")
    assert isinstance(change, wire.ClerkPermit)
    assert (change.ts, change.effective_at) == (ack.ts, NOW)  # takes effect on arrival
    # The same action sent again is the same bytes: the aggregator takes it once too.
    again = payload(kind="ack", alert="A-0002", comment="doctor called")
    assert encode_action(again) == encode_action(ack)


@pytest.mark.parametrize(
    ("entry", "sentence"),
    [
        ({"kind": "ack", "alert": "A-1", "comment": "  "}, "an acknowledgement needs a comment"),
        ({"kind": "note", "text": ""}, "a note needs its text"),
        ({"kind": "adjust", "attendance": 10, "reason": ""}, "an adjustment needs its reason"),
        ({"kind": "adjust", "attendance": -1, "reason": "x"},
         "an adjustment needs the counted attendance, a whole number"),
        ({"kind": "inspection", "item": "C(3)", "result": "deficient", "note": " "},
         "a deficient mark needs a note saying what was found"),
        ({"kind": "inspection", "item": "C(3)", "result": "fine"},
         "result must be one of ok, deficient, n/a, not 'fine'"),
        ({"kind": "clerk-permit", "status": "revoked", "resolution": ""},
         "a change of the permit needs the Town Board's resolution"),
        ({"kind": "clerk-permit", "status": "denied", "resolution": "TB-1"},
         "status must be revoked or issued, not 'denied'"),
    ],
)  # fmt: skip
def test_what_the_terminal_requires_the_page_requires_in_one_sentence(
    entry: dict[str, object], sentence: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(sentence)}$"):
        payload(**entry)


@pytest.mark.parametrize(
    "message",
    [
        None, {}, [], "actions", [None], [{"id": "short", "kind": "note"}],
        [{"id": "abcdef012345", "kind": "shout"}],
        [{"id": "abcdef012345", "kind": "note", "text": ["a list"]}],
        [{"id": "abcdef012345", "kind": "note", "text": "x" * (wire.MAX_TEXT + 101)}],
        [{"id": "abcdef012345", "kind": "adjust", "attendance": True}],
        [{"id": f"abcdef{n:06d}", "kind": "note", "text": "x"} for n in range(MOST_ACTIONS + 1)],
    ],
)  # fmt: skip
def test_a_malformed_message_is_no_actions(message: object) -> None:
    assert parse_actions(message) is None


def test_a_stamp_from_the_future_or_none_is_the_hubs_clock() -> None:
    assert stamp_for(one(kind="note", text="x"), NOW) == datetime.fromisoformat(STAMP)
    late = (NOW + timedelta(seconds=FUTURE_S + 1)).isoformat()
    assert stamp_for(one(kind="note", text="x", ts=late), NOW) == NOW
    assert stamp_for(one(kind="note", text="x", ts="yesterday"), NOW) == NOW
    assert stamp_for(one(kind="note", text="x", ts="2027-07-04T18:00:00"), NOW) == NOW  # naive
    offline = (NOW - timedelta(hours=2)).isoformat()  # made without a signal: kept
    assert stamp_for(one(kind="note", text="x", ts=offline), NOW) == NOW - timedelta(hours=2)
    assert one(kind="note", text="x", delivered=True).delivered is True


def test_each_role_sends_its_own_kinds() -> None:
    assert all(kind_allowed(k, "inspector") for k in ("ack", "note", "adjust", "inspection"))
    assert not kind_allowed("clerk-permit", "inspector")
    assert kind_allowed("clerk-permit", "clerk")
    assert not kind_allowed("note", "clerk")  # the broker would refuse the Clerk's note


def test_every_tag_has_its_style_on_the_terminal_and_its_class_on_the_page() -> None:
    assert set(TAG_STYLES) == set(TAGS)
    css = CSS.read_text()
    missing = [tag for tag in TAGS if tag and f".t-{tag} " not in css]
    assert missing == []
