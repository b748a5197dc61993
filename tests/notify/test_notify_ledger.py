"""Once per alert and state, across restarts; a channel's notices in order; capped backoff."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from kent_ops.core import wire
from kent_ops.core.errors import UsageError
from kent_ops.notify.config import Channel, Person
from kent_ops.notify.delivery import Job, Outbox
from kent_ops.notify.ledger import Ledger, NoticeKey
from kent_ops.notify.message import Notice
from kent_ops.notify.plan import notices_for

T = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
BREACH = wire.Alert(id="A-0004", rule="nurse-ratio", severity="breach", state="active", since=T)
NOTICE = Notice("title", "body")


def person(who: str, *severities: str, channels: int = 1) -> Person:
    chans = tuple(Channel(who, n, "mailto", f"mailto://x/{who}{n}") for n in range(1, channels + 1))
    return Person(who, frozenset(severities or ("breach",)), chans)


def record(ledger: Ledger, todo: list[tuple[NoticeKey, Channel]]) -> list[NoticeKey]:
    keys = [key for key, _ in todo]
    if keys:
        ledger.add_pending(keys, "t", "b")
    return keys


# -- the ledger ---------------------------------------------------------------------------------


def test_a_new_ledger_is_written_private_at_once(tmp_path: Path) -> None:
    path = tmp_path / "sent.json"
    Ledger.load(path)
    assert json.loads(path.read_text()) == {"version": 1, "notices": {}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_what_was_sent_and_what_is_pending_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "sent.json"
    ledger = Ledger.load(path)
    sent, waiting = (
        NoticeKey("A-0001", "active", "insp-1", 1),
        NoticeKey("A-0001", "active", "insp-2", 1),
    )
    ledger.add_pending([sent, waiting], "the title", "the body")
    ledger.finish(sent, "sent")
    again = Ledger.load(path)
    assert again.status(sent) == "sent"
    assert list(again.pending()) == [(waiting, "the title", "the body")]


def test_an_unreadable_ledger_is_moved_aside_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "sent.json"
    path.write_text("{not json")
    ledger = Ledger.load(path)
    assert ledger.set_aside == tmp_path / "sent.json.unreadable"
    assert ledger.set_aside.read_text() == "{not json"
    assert list(ledger.pending()) == []


def test_a_ledger_makes_its_missing_folder_private(tmp_path: Path) -> None:
    ledger = Ledger.load(tmp_path / "new" / "state" / "sent.json")
    assert ledger.path.is_file()
    assert (ledger.path.parent.stat().st_mode & 0o777) == 0o700


def test_a_ledger_whose_folder_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(UsageError, match="cannot be made"):
        Ledger.load(tmp_path / "a-file" / "sent.json")


# -- what an alert calls for --------------------------------------------------------------------


def test_a_raised_alert_is_told_once_to_each_channel_of_each_person_who_wants_it(
    tmp_path: Path,
) -> None:
    ledger = Ledger.load(tmp_path / "sent.json")
    people = [
        person("insp-1", channels=2),
        person("lots", "warning"),
        person("all", "breach", "data"),
    ]
    keys = record(ledger, notices_for(BREACH, people, ledger))
    assert [(k.person, k.channel) for k in keys] == [("insp-1", 1), ("insp-1", 2), ("all", 1)]
    # Republished (a flap within clear_s, an acknowledgement, a note): nothing new.
    flapped = msgspec.structs.replace(BREACH, ended_at=T)
    back = msgspec.structs.replace(BREACH, ended_at=None, acknowledged=[])
    for again in [flapped, back] * 50:
        assert notices_for(again, people, ledger) == []


def test_an_end_is_told_only_to_those_told_of_the_start(tmp_path: Path) -> None:
    ledger = Ledger.load(tmp_path / "sent.json")
    insp = person("insp-1")
    record(ledger, notices_for(BREACH, [insp], ledger))
    late = person("insp-9")  # joined (or was configured) after the alert was raised
    cleared = msgspec.structs.replace(BREACH, state="cleared", ended_at=T, cleared_at=T)
    keys = record(ledger, notices_for(cleared, [insp, late], ledger))
    assert keys == [NoticeKey("A-0004", "cleared", "insp-1", 1)]
    assert notices_for(cleared, [insp, late], ledger) == []
    yesterday = msgspec.structs.replace(cleared, id="A-0001")  # never seen active
    assert notices_for(yesterday, [insp], ledger) == []


# -- the outbox ---------------------------------------------------------------------------------


def job(alert: str, state: str, who: str, due: float) -> Job:
    return Job(NoticeKey(alert, state, who, 1), NOTICE, due=due)


def test_a_channel_sends_in_order_while_another_goes_ahead() -> None:
    box = Outbox()
    start, end = job("A-0001", "active", "insp-1", 0), job("A-0001", "cleared", "insp-1", 5)
    other = job("A-0001", "active", "insp-2", 5)
    box.add(("insp-1", 1), start)
    box.add(("insp-1", 1), end)
    box.add(("insp-2", 1), other)
    assert box.take(0) == (("insp-1", 1), start)
    start.due = 100  # it failed: back off; the end waits behind it, insp-2 does not
    assert box.take(10) == (("insp-2", 1), other)
    box.done(("insp-2", 1))
    assert box.take(10) is None
    assert box.next_due() == 100
    assert box.take(100) == (("insp-1", 1), start)
    box.done(("insp-1", 1))
    assert box.take(100) == (("insp-1", 1), end)
    box.done(("insp-1", 1))
    assert len(box) == 0
    assert box.next_due() is None


def test_lanes_take_turns_and_a_channel_keeps_its_services_spacing() -> None:
    box = Outbox()
    a1, b1 = job("A-0001", "active", "a", 0), job("A-0001", "active", "b", 0)
    a2, b2 = job("A-0002", "active", "a", 0), job("A-0002", "active", "b", 0)
    for j in (a1, b1, a2, b2):
        box.add((j.key.person, 1), j)
    assert box.take(0) == (("a", 1), a1)
    box.done(("a", 1), not_before=5.5)  # apprise's spacing for this service
    assert box.take(0) == (("b", 1), b1)  # b's turn, not a's next
    box.done(("b", 1), not_before=5.5)
    assert box.take(1) is None
    assert box.next_due() == 5.5
    assert box.take(5.5) == (("a", 1), a2)
