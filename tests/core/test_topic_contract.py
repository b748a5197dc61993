"""The topic tree of docs/protocol.md, pinned: the one place the tests spell a topic.

Every other test builds its topics with :class:`kent_ops.core.wire.Topics`. This one
keeps the literal strings, so a change to any topic fails here, once, and has to be
made deliberately (in docs/protocol.md, in ``Topics`` and in this table together).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kent_ops.core.wire import TopicRef, Topics

ROOT = Path(__file__).resolve().parents[2]
TOPICS = Topics("kent-summer-fest-2027")

# (the docs' pattern, how Topics builds one, the literal topic, what parse reads back)
CONTRACT: list[tuple[str, Callable[[Topics], str], str, TopicRef]] = [
    ("kent/{e}/gate/{gate}/count", lambda t: t.gate_count("north"),
     "kent/kent-summer-fest-2027/gate/north/count", TopicRef("gate", "north")),
    ("kent/{e}/parking/{lot}/occupancy", lambda t: t.lot_occupancy("lot-a"),
     "kent/kent-summer-fest-2027/parking/lot-a/occupancy", TopicRef("lot", "lot-a")),
    ("kent/{e}/staff/{station}/badge", lambda t: t.staff_badge("first-aid"),
     "kent/kent-summer-fest-2027/staff/first-aid/badge", TopicRef("badge", "first-aid")),
    ("kent/{e}/staff/{station}/roster", lambda t: t.staff_roster("first-aid"),
     "kent/kent-summer-fest-2027/staff/first-aid/roster", TopicRef("roster", "first-aid")),
    ("kent/{e}/sensor/{sensor}/availability", lambda t: t.availability("north"),
     "kent/kent-summer-fest-2027/sensor/north/availability", TopicRef("availability", "north")),
    ("kent/{e}/inspector/{who}/note", lambda t: t.inspector("insp-1", "note"),
     "kent/kent-summer-fest-2027/inspector/insp-1/note", TopicRef("note", "insp-1")),
    ("kent/{e}/inspector/{who}/ack", lambda t: t.inspector("insp-1", "ack"),
     "kent/kent-summer-fest-2027/inspector/insp-1/ack", TopicRef("ack", "insp-1")),
    ("kent/{e}/inspector/{who}/inspection", lambda t: t.inspector("insp-1", "inspection"),
     "kent/kent-summer-fest-2027/inspector/insp-1/inspection", TopicRef("inspection", "insp-1")),
    ("kent/{e}/inspector/{who}/adjust", lambda t: t.inspector("insp-1", "adjust"),
     "kent/kent-summer-fest-2027/inspector/insp-1/adjust", TopicRef("adjust", "insp-1")),
    ("kent/{e}/clerk/{who}/permit", lambda t: t.clerk_permit("town-clerk"),
     "kent/kent-summer-fest-2027/clerk/town-clerk/permit", TopicRef("clerk-permit", "town-clerk")),
    ("kent/{e}/notifier/{id}/sent", lambda t: t.notifier_sent("mail"),
     "kent/kent-summer-fest-2027/notifier/mail/sent", TopicRef("notifier-sent", "mail")),
    ("kent/{e}/adapter/{sensor}/raw", lambda t: t.adapter_raw("north"),
     "kent/kent-summer-fest-2027/adapter/north/raw", TopicRef("adapter-raw", "north")),
    ("kent/{e}/status", lambda t: t.status,
     "kent/kent-summer-fest-2027/status", TopicRef("status", "")),
    ("kent/{e}/alerts/{alert_id}", lambda t: t.alert("A-0001"),
     "kent/kent-summer-fest-2027/alerts/A-0001", TopicRef("alert", "A-0001")),
    ("kent/{e}/gate/{gate}/command", lambda t: t.gate_command("north"),
     "kent/kent-summer-fest-2027/gate/north/command", TopicRef("command", "north")),
    ("kent/{e}/evidence/checkpoint", lambda t: t.checkpoint,
     "kent/kent-summer-fest-2027/evidence/checkpoint", TopicRef("checkpoint", "")),
    ("kent/{e}/aggregator/availability", lambda t: t.aggregator_availability,
     "kent/kent-summer-fest-2027/aggregator/availability",
     TopicRef("aggregator-availability", "")),
    ("kent/{e}/bridge/{property}/state", lambda t: t.bridge_state("meadow"),
     "kent/kent-summer-fest-2027/bridge/meadow/state", TopicRef("bridge-state", "meadow")),
]  # fmt: skip

# The subscriptions, literally: what the aggregator, the dashboards and the bridges ask for.
WILDCARDS: list[tuple[Callable[[Topics], str | list[str]], str | list[str]]] = [
    (lambda t: t.prefix, "kent/kent-summer-fest-2027"),
    (lambda t: t.everything, "kent/kent-summer-fest-2027/#"),
    (lambda t: t.alerts_wildcard, "kent/kent-summer-fest-2027/alerts/+"),
    (lambda t: t.gate_commands_wildcard, "kent/kent-summer-fest-2027/gate/+/command"),
    (lambda t: t.bridge_states, "kent/kent-summer-fest-2027/bridge/+/state"),
    (lambda t: t.inputs, [
        "kent/kent-summer-fest-2027/gate/+/count",
        "kent/kent-summer-fest-2027/parking/+/occupancy",
        "kent/kent-summer-fest-2027/staff/+/badge",
        "kent/kent-summer-fest-2027/staff/+/roster",
        "kent/kent-summer-fest-2027/sensor/+/availability",
        "kent/kent-summer-fest-2027/inspector/+/+",
        "kent/kent-summer-fest-2027/clerk/+/permit",
        "kent/kent-summer-fest-2027/notifier/+/sent",
        "kent/kent-summer-fest-2027/adapter/+/raw",
    ]),
]  # fmt: skip


def _documented() -> list[str]:
    """The topics of docs/protocol.md's table, in its order."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    return re.findall(r"^\| `(kent/\{e\}/[^`]*)` \|", text, flags=re.M)


def test_the_table_here_is_the_table_in_the_protocol_document() -> None:
    assert [pattern for pattern, *_ in CONTRACT] == _documented()


@pytest.mark.parametrize(("pattern", "build", "literal", "ref"), CONTRACT, ids=lambda v: v)
def test_topics_builds_each_topic_exactly_and_parses_it_back(
    pattern: str, build: Callable[[Topics], str], literal: str, ref: TopicRef
) -> None:
    assert build(TOPICS) == literal
    assert TOPICS.parse(literal) == ref


@pytest.mark.parametrize(("build", "literal"), WILDCARDS)
def test_the_subscriptions_are_exactly_these(
    build: Callable[[Topics], str | list[str]], literal: str | list[str]
) -> None:
    assert build(TOPICS) == literal


def test_another_events_topics_are_not_ours() -> None:
    assert TOPICS.parse("kent/another-event/gate/north/count") is None
    assert TOPICS.parse("kent/kent-summer-fest-2027-b/status") is None
