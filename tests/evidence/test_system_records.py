"""The service's own records are Structs whose bytes are those the service always wrote.

Existing logs hold these bytes under their hashes, so each event's encoding is pinned
here, byte for byte, as the service wrote it when its records were dicts; and a record
is read back as its Struct, also from the short bodies hand-made logs and older logs hold.
"""

from __future__ import annotations

import pytest

from kent_ops.core.wire import Topics
from kent_ops.evidence.system import (
    SYSTEM_RECORDS,
    BrokerConnected,
    BrokerDisconnected,
    BrokerRestarted,
    BrokerSessionContested,
    BrokerSessionLost,
    BrokerUptime,
    Checkpointed,
    CheckpointRead,
    Claim,
    ClockAgrees,
    ClockJump,
    FloodCountLost,
    FloodStarted,
    FloodSummary,
    Opened,
    PermitChanged,
    RollbackAccepted,
    RollbackFound,
    Started,
    Stopped,
    StorageError,
    SystemRecord,
    VerificationFailed,
    encode_system,
    figures,
    read_system,
)

SHA = "ab" * 32
HEAD = "cd" * 32
AT = "2027-07-04T14:00:00+00:00"
CLAIM = Claim(12, HEAD, AT, "the broker's retained checkpoint")
CLAIM_JSON = (
    '{"hash":"' + HEAD + '","record":12,"source":"the broker\'s retained checkpoint",'
    '"ts":"' + AT + '"}'
)

PINNED: list[tuple[SystemRecord, str]] = [
    (
        Opened(event_id="kent-summer-fest-2027", permit_sha256=SHA),
        '{"event":"opened","event_id":"kent-summer-fest-2027","permit_sha256":"' + SHA + '"}',
    ),
    (
        PermitChanged(permit_sha256=SHA, opened_with=None),
        '{"event":"permit-changed","opened_with":null,"permit_sha256":"' + SHA + '"}',
    ),
    (
        Started(
            version="0.1.0",
            clock="wall",
            session="f00d",
            session_keyed_by="password",
            checkpoint=CLAIM,
            broker="mqtt://127.0.0.1:1883",
            permit_sha256=SHA,
            signed=False,
            replayed=3,
            snapshot=None,
            snapshot_refused="the snapshot in record 9 was not used: ünknown",
        ),
        '{"broker":"mqtt://127.0.0.1:1883","checkpoint":' + CLAIM_JSON + ',"clock":"wall",'
        '"event":"started","permit_sha256":"' + SHA + '","replayed":3,"session":"f00d",'
        '"session_keyed_by":"password","signed":false,"snapshot":null,'
        '"snapshot_refused":"the snapshot in record 9 was not used: ünknown","version":"0.1.0"}',
    ),
    (
        Started(checkpoint="unread: no answer within 3 s", clock="sensor", snapshot=7),
        '{"broker":"","checkpoint":"unread: no answer within 3 s","clock":"sensor",'
        '"event":"started","permit_sha256":"","replayed":0,"session":null,'
        '"session_keyed_by":null,"signed":false,"snapshot":7,"snapshot_refused":null,'
        '"version":""}',
    ),
    (Stopped(), '{"event":"stopped"}'),
    (
        BrokerConnected(broker="mqtts://b:8883", session_present=True),
        '{"broker":"mqtts://b:8883","event":"broker-connected","session_present":true}',
    ),
    (
        BrokerDisconnected(broker="mqtts://b:8883", reason="Keep alive timeout"),
        '{"broker":"mqtts://b:8883","event":"broker-disconnected","reason":"Keep alive timeout"}',
    ),
    (
        BrokerUptime(uptime_s=3600.0),
        '{"event":"broker-uptime","uptime_s":3600.0}',
    ),
    (
        BrokerRestarted(
            how="its uptime fell from 3,600 s to 4 s",
            uptime_s=4.0,
            previous_uptime_s=3600.0,
            previous_at="2027-07-04T18:00:00+00:00",
        ),
        '{"event":"broker-restarted","how":"its uptime fell from 3,600 s to 4 s",'
        '"previous_at":"2027-07-04T18:00:00+00:00","previous_uptime_s":3600.0,"uptime_s":4.0}',
    ),
    (
        BrokerDisconnected(broker="mqtts://b:8883", reason="Keep alive timeout"),
        '{"broker":"mqtts://b:8883","event":"broker-disconnected","reason":"Keep alive timeout"}',
    ),
    (
        Checkpointed(record=40, hash=HEAD, ts=AT),
        '{"event":"checkpoint","hash":"' + HEAD + '","record":40,"ts":"' + AT + '"}',
    ),
    (CheckpointRead(retained=None), '{"event":"checkpoint-read","retained":null}'),
    (
        CheckpointRead(retained=CLAIM),
        '{"event":"checkpoint-read","retained":' + CLAIM_JSON + "}",
    ),
    (
        StorageError(error="disk full", since=AT, held=5),
        '{"error":"disk full","event":"storage-error","held":5,"since":"' + AT + '"}',
    ),
    (
        VerificationFailed(record=3, problem="it was changed"),
        '{"event":"verification-failed","problem":"it was changed","record":3}',
    ),
    (
        BrokerSessionLost(cause="session-new", session_present=False, changed_id=False),
        '{"cause":"session-new","changed_id":false,"event":"broker-session-lost",'
        '"session_present":false}',
    ),
    (
        BrokerSessionLost(
            cause="session-new", session_present=False, changed_id=True, previous_session="aaa"
        ),
        '{"cause":"session-new","changed_id":true,"event":"broker-session-lost",'
        '"previous_session":"aaa","session_present":false}',
    ),
    (
        BrokerSessionContested(cause="disconnects", count=3, within_s=60.0),
        '{"cause":"disconnects","count":3,"event":"broker-session-contested","within_s":60.0}',
    ),
    (
        RollbackFound(records=10, claim=CLAIM),
        '{"claim":' + CLAIM_JSON + ',"event":"rollback-found","records":10}',
    ),
    (
        RollbackAccepted(records=0, claim=CLAIM),
        '{"claim":' + CLAIM_JSON + ',"event":"rollback-accepted","records":0}',
    ),
    (
        ClockJump(jump_s=-600.125, host_clock=AT, service_clock=AT),
        '{"event":"clock-jump","host_clock":"' + AT + '","jump_s":-600.125,'
        '"service_clock":"' + AT + '"}',
    ),
    (
        ClockAgrees(jump_s=0.5, host_clock=AT, service_clock=AT),
        '{"event":"clock-agrees","host_clock":"' + AT + '","jump_s":0.5,'
        '"service_clock":"' + AT + '"}',
    ),
    (
        FloodStarted(
            source="sensor-north", since=AT, budget_bytes=65536, period_s=60.0, alert="S-0001"
        ),
        '{"alert":"S-0001","budget_bytes":65536,"event":"flood-started","period_s":60.0,'
        '"since":"' + AT + '","source":"sensor-north"}',
    ),
    (
        FloodSummary(
            source="sensor-north",
            first_at=AT,
            last_at=AT,
            messages=6,
            size=70_035,
            largest=70_000,
            sha256=SHA,
            reasons={"not valid JSON": 6, "(others)": 1},
            topics={Topics("e").gate_count("north"): 6},
            alert=None,
        ),
        '{"alert":null,"bytes":70035,"event":"flood-summary","first_at":"' + AT + '",'
        '"largest":70000,"last_at":"' + AT + '","messages":6,'
        '"reasons":{"(others)":1,"not valid JSON":6},"sha256":"' + SHA + '",'
        '"source":"sensor-north","topics":{"' + Topics("e").gate_count("north") + '":6}}',
    ),
    (
        FloodCountLost(source="sensor-north", alert="S-0002", why="it stopped abruptly"),
        '{"alert":"S-0002","event":"flood-count-lost","source":"sensor-north",'
        '"why":"it stopped abruptly"}',
    ),
]


@pytest.mark.parametrize(("record", "written"), PINNED, ids=lambda v: getattr(v, "event", ""))
def test_each_event_is_written_as_the_service_always_wrote_it(
    record: SystemRecord, written: str
) -> None:
    assert encode_system(record) == written.encode()
    assert read_system(written.encode()) == record


def test_every_event_is_pinned() -> None:
    assert {type(record) for record, _ in PINNED} == set(SYSTEM_RECORDS)


def test_a_short_body_reads_as_its_event_with_the_rest_left_at_defaults() -> None:
    assert read_system(b'{"event":"started","clock":"sensor"}') == Started(clock="sensor")
    assert read_system(b'{"event":"clock-jump"}') == ClockJump()
    assert read_system(b'{"event":"flood-summary","messages":5}') == FloodSummary(messages=5)
    assert read_system(b'{"event":"started","client_id":"old"}') == Started()


@pytest.mark.parametrize(
    "payload",
    [
        b"{not json",
        b"[1, 2]",
        b'{"no":"event"}',
        b'{"event":"no-such-event"}',
        b'{"event":"started","clock":5}',
        b'{"event":"checkpoint","ts":"2027-07-04T14:00:00+00:00"}',
    ],
)
def test_what_is_no_known_event_reads_as_none(payload: bytes) -> None:
    assert read_system(payload) is None


def test_a_session_records_figures_keep_the_order_the_alert_always_showed() -> None:
    lost = BrokerSessionLost(
        cause="session-new", session_present=False, changed_id=True, previous_session="aaa"
    )
    assert list(figures(lost)) == ["cause", "session_present", "changed_id", "previous_session"]
    contested = BrokerSessionContested(cause="disconnects", count=3, within_s=60.0)
    assert list(figures(contested)) == ["cause", "count", "within_s"]
