"""The session id and watch, the head file, the checkpoint gate and the service alerts,
without a broker."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from live_support import TOPICS

from kent_ops.broker.client import BrokerAddress
from kent_ops.core import wire
from kent_ops.core.errors import UsageError
from kent_ops.evidence.system import BrokerSessionContested, BrokerSessionLost, figures
from kent_ops.service.rhythm import Timing
from kent_ops.service.rollback import BROKER_SOURCE, Claim, HeadFile, behind
from kent_ops.service.service_alerts import ServiceAlerts, left_open
from kent_ops.service.session import SessionWatch, session_identity
from kent_ops.service.storage_outage import StorageOutage
from kent_ops.service.watch import CheckpointGate

EVENT = "kent-summer-fest-2027"
AT = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)


def address(
    user: str | None = "kent-ops-aggregator", password: str | None = "pw-1"
) -> BrokerAddress:
    return BrokerAddress("127.0.0.1", 1883, username=user, password=password)


def test_the_id_is_keyed_by_the_password_and_never_the_old_fixed_one(tmp_path: Path) -> None:
    one = session_identity(EVENT, address(), tmp_path)
    assert one == session_identity(EVENT, address(), tmp_path)  # the same every start
    assert one.client_id.startswith(f"kent-ops-aggregator-{EVENT}-")
    assert one.client_id != f"kent-ops-aggregator-{EVENT}"
    assert one.keyed_by == "password"
    others = {
        session_identity(EVENT, address(password="pw-2"), tmp_path).client_id,
        session_identity(EVENT, address(user="sensor-north"), tmp_path).client_id,
        session_identity("kent-fall-fair-2027", address(), tmp_path).client_id,
    }
    assert one.client_id not in others
    assert len(others) == 3
    assert one.fingerprint not in one.client_id
    assert list(tmp_path.iterdir()) == []  # no key file with a password


def test_without_a_password_a_private_key_file_beside_the_log_keys_it(tmp_path: Path) -> None:
    one = session_identity(EVENT, address(None, None), tmp_path)
    key = tmp_path / f"kent-ops-{EVENT}.session-key"
    assert one.keyed_by == str(key)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert session_identity(EVENT, address(None, None), tmp_path) == one
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    assert session_identity(EVENT, address(None, None), elsewhere) != one


def test_a_damaged_key_file_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / f"kent-ops-{EVENT}.session-key").write_text("short\n")
    with pytest.raises(UsageError, match="too short; delete it to make a new one"):
        session_identity(EVENT, address(None, None), tmp_path)


def test_a_session_found_new_is_lost_only_where_one_was_expected() -> None:
    fresh = SessionWatch("aaa", expected=False, previous=None)
    assert fresh.connected(session_present=False) is None  # a new log: nothing lost
    lost = fresh.connected(session_present=False)
    assert isinstance(lost, BrokerSessionLost)
    assert figures(lost) == {
        "cause": "session-new",
        "session_present": False,
        "changed_id": False,
        "previous_session": "aaa",
    }
    assert fresh.connected(session_present=True) is None
    changed = SessionWatch("bbb", expected=True, previous="aaa")
    lost = changed.connected(session_present=False)
    assert lost is not None
    assert lost.changed_id is True


def test_connections_closed_again_and_again_are_contested_once_a_minute() -> None:
    watch = SessionWatch("aaa", expected=True, previous="aaa")
    assert watch.disconnected(0.0) is None
    assert watch.disconnected(100.0) is None  # an odd broker restart
    assert watch.disconnected(101.0) is None
    contested = watch.disconnected(102.0)
    assert isinstance(contested, BrokerSessionContested)
    assert figures(contested) == {"cause": "disconnects", "count": 3, "within_s": 60.0}
    assert watch.disconnected(103.0) is None  # said already
    assert watch.disconnected(200.0) is None


def test_the_head_file_is_written_whole_at_most_every_second(tmp_path: Path) -> None:
    head = HeadFile(tmp_path / "evidence.sqlite")
    assert head.path == tmp_path / "evidence.sqlite.head"
    assert head.read() is None
    head.committed((5, "a" * 64), AT, mono=10.0)
    assert json.loads(head.path.read_text())["record"] == 5
    head.committed((9, "b" * 64), AT, mono=10.5)
    assert json.loads(head.path.read_text())["record"] == 5  # within the second
    head.note_session("fp1")
    head.sync(mono=11.0)
    assert json.loads(head.path.read_text()) == {
        "record": 9,
        "hash": "b" * 64,
        "ts": AT.isoformat(),
        "session": "fp1",
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evidence.sqlite.head"]
    claim = HeadFile(tmp_path / "evidence.sqlite").claim()
    assert claim is not None
    assert (claim.record, claim.hash) == (9, "b" * 64)


def test_a_damaged_head_file_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "evidence.sqlite.head").write_text("{not json")
    with pytest.raises(UsageError, match="head file .* is damaged"):
        HeadFile(tmp_path / "evidence.sqlite").read()


def test_behind_is_fewer_records_or_another_hash_at_the_claimed_one() -> None:
    hashes = {1: "h1", 2: "h2", 3: "h3"}
    claim = Claim(3, "h3", None, BROKER_SOURCE)
    assert not behind(3, hashes.get, claim)
    assert not behind(5, hashes.get, claim)
    assert behind(2, hashes.get, claim)
    assert behind(3, {**hashes, 3: "other"}.get, claim)


def point(record: int, digest: str) -> bytes:
    return wire.encode(wire.Checkpoint(record=record, hash=digest, ts=AT))


def test_the_gate_publishes_no_checkpoint_below_the_retained_one() -> None:
    gate = CheckpointGate(Claim(100, "h100", None, BROKER_SOURCE))
    assert not gate.allows(point(90, "x"))
    assert not gate.allows(point(100, "other"))
    assert gate.allows(point(100, "h100"))
    assert gate.allows(point(50, "anything"))  # passed once: the log only grows after
    unread = CheckpointGate(checked=False)
    assert not unread.allows(point(1, "x"))
    unread.checked = True
    assert unread.allows(point(1, "x"))


def test_service_alerts_share_the_s_numbering_and_clear_clear_s_after_they_end(
    tmp_path: Path,
) -> None:
    outage = StorageOutage(Timing(), tmp_path / "e.sqlite", probe=lambda: None)
    outage.note_issued(2)  # two storage alerts before
    alerts = ServiceAlerts(outage, clear_s=30)
    lost = alerts.raise_("broker-session", {"cause": "session-new"}, {}, AT)
    jump = alerts.raise_("clock-jump", {"jump_s": -600.0}, {}, AT, momentary=False)
    assert (lost.id, jump.id) == ("S-0003", "S-0004")
    assert lost.ended_at == AT
    assert jump.ended_at is None
    assert "jumped -600 s" in jump.message
    assert alerts.due(AT + timedelta(seconds=29)) == []
    (cleared,) = alerts.due(AT + timedelta(seconds=30))
    assert (cleared.id, cleared.state) == ("S-0003", "cleared")
    (ended,) = alerts.end("clock-jump", AT + timedelta(seconds=60), {"agrees": True})
    assert ended.message == "the host clock agrees with the service's steady clock again"
    (closed,) = alerts.close_all(AT + timedelta(seconds=61))
    assert (closed.id, closed.state) == ("S-0004", "cleared")
    assert alerts.open == {}


def test_a_crashed_runs_open_service_alerts_are_found_for_clearing(tmp_path: Path) -> None:
    outage = StorageOutage(Timing(), tmp_path / "e.sqlite", probe=lambda: None)
    alerts = ServiceAlerts(outage, clear_s=30)
    open_one = alerts.raise_("broker-session", {"cause": "session-new"}, {}, AT)
    done = alerts.close_all(AT)[0]
    other = alerts.raise_("evidence-rollback", {"records": 1}, {"record": 2}, AT)
    retained = {
        TOPICS.alert("S-0001"): wire.encode(done),
        TOPICS.alert("S-0002"): wire.encode(other),
        TOPICS.alert("A-0001"): wire.encode(msgspec.structs.replace(open_one, id="A-0001")),
        TOPICS.gate_command("north"): b"{}",
    }
    assert [a.id for a in left_open(retained)] == ["S-0002"]
