"""kent_ops.evidence.replay: one way to turn a log back into the live engine's state."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from report_support import ScriptedLog, utc, write_permit

from kent_ops.core import wire
from kent_ops.core.engine import Engine, FeedResult
from kent_ops.evidence.log import ChainBroken
from kent_ops.evidence.replay import Replayed, last_record_id, replay
from kent_ops.report.collect import Collector, normalise_reason
from kent_ops.report.compare import compare_with_live

T0 = utc(2027, 7, 4, 14, 0)


def day(tmp_path: Path, clock: str = "sensor") -> tuple[Path, ScriptedLog]:
    permit = write_permit(tmp_path, pending_s=5, clear_s=10, stale_after_s=60)
    log = ScriptedLog(tmp_path / "evidence.sqlite", permit, T0, clock=clock)
    log.badge(0, "DR-1", "doctor")
    log.badge(0, "RN-1", "nurse")
    for k in range(40):
        log.gate("north", 20 * k, 60 * k)
        if k < 20:
            log.gate("south", 20 * k, 0)  # then falls silent: sensor-offline
        if clock == "wall":
            log.tick(20 * k + 10)
    log.close(801)
    return permit, log


@pytest.mark.parametrize("clock", ["sensor", "wall"])
def test_replay_ends_where_the_live_engine_ended(tmp_path: Path, clock: str) -> None:
    permit, log = day(tmp_path, clock)
    result = replay(log.permit, log.log.path)
    assert result.clock == clock  # from the log's "started" record
    assert result.recorded_clock == clock
    live = log.engine
    if clock == "wall":
        live.tick(log.at(801))  # the replay stands at the last record, the stop
    assert result.engine.alerts == live.alerts
    replayed, now = result.engine.status(), live.status()
    assert msgspec.structs.replace(replayed, ts=None) == msgspec.structs.replace(now, ts=None)
    assert {a.rule for a in live.alerts.values()} >= {"nurse-ratio", "sensor-offline"}
    assert result.records == last_record_id(log.log.path)
    assert result.messages == 62
    assert result.disagreements == 0
    assert result.verified


def test_replay_compares_equal_with_the_live_alert_records(tmp_path: Path) -> None:
    _, log = day(tmp_path, "wall")
    collector = Collector()
    result = replay(log.permit, log.log.path, on_record=collector, on_message=collector.on_message)
    comparison = compare_with_live(
        result.engine.alerts, collector.live_alerts, clock=result.clock, log_end=result.end
    )
    assert comparison.equal, comparison.problems
    assert comparison.live_count == len(log.published) > 0


def test_a_changed_live_alert_is_reported_as_a_difference() -> None:
    alert = wire.Alert(
        id="A-0001", rule="nurse-ratio", subject=None, since=utc(2027, 7, 4, 14, 0),
        raised_at=utc(2027, 7, 4, 14, 0, 10), ended_at=None, cleared_at=None, state="active",
    )  # fmt: skip
    other = msgspec.structs.replace(alert, since=utc(2027, 7, 4, 13, 59))
    got = compare_with_live({"A-0001": alert}, {"A-0001": other}, clock="sensor", log_end=None)
    assert not got.equal
    assert got.problems == [
        "A-0001: since '2027-07-04T13:59:00+00:00' live vs '2027-07-04T14:00:00+00:00' replayed"
    ]
    missing = compare_with_live({"A-0001": alert}, {}, clock="sensor", log_end=None)
    assert missing.problems == ["A-0001 was found on replay but never logged live"]


def test_on_message_sees_every_message_and_asks_for_records_it_wants(tmp_path: Path) -> None:
    _, log = day(tmp_path)
    seen: list[FeedResult] = []
    records: list[Replayed] = []

    def on_message(result: FeedResult, engine: Engine) -> bool:
        seen.append(result)
        return result.kind == "badge"

    def on_record(rec: Replayed, engine: Engine) -> None:
        records.append(rec)

    result = replay(log.permit, log.log.path, on_message=on_message, on_record=on_record)
    assert len(seen) == result.messages
    message_records = [r for r in records if r.kind == "message"]
    assert [r.result.kind for r in message_records if r.result] == ["badge", "badge"]
    assert {r.kind for r in records} >= {"system", "alert", "status"}


def test_until_reads_only_up_to_a_fixed_record(tmp_path: Path) -> None:
    _, log = day(tmp_path)
    result = replay(log.permit, log.log.path, until=10)
    assert result.records == 10
    assert result.messages == 8  # opened, started, then messages (no alert yet)


def test_a_gap_in_the_ids_is_named(tmp_path: Path) -> None:
    import sqlite3

    _, log = day(tmp_path)
    conn = sqlite3.connect(log.log.path)
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute("DELETE FROM records WHERE id = 4")
    conn.commit()
    conn.close()
    with pytest.raises(ChainBroken, match="record 4 is missing"):
        replay(log.permit, log.log.path)
    # Without verifying, the replay reads what is there (the caller verified elsewhere).
    assert replay(log.permit, log.log.path, verify=False).records == last_record_id(log.log.path)


@pytest.mark.parametrize(
    ("reason", "group"),
    [
        ("not valid JSON: expected ':' at line 1", "not valid JSON"),
        ("wrong field: Expected `int`, got `str` - at `$.seq`", "wrong field `$.seq`"),
        ("gate 'west' is not listed in the permit", "gate … is not listed in the permit"),
        ("seq 17 already counted (last 20)", "seq N already counted (last N)"),
        ("payload of 70,000 bytes is over the 64 KiB limit",
         "payload of N bytes is over the N KiB limit"),
    ],
)  # fmt: skip
def test_rejection_reasons_group_without_their_particulars(reason: str, group: str) -> None:
    assert normalise_reason(reason) == group
