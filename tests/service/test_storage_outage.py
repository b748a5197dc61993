"""The evidence-storage outage state machine, on fake clocks: no disk, no threads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest

from kent_ops.core import wire
from kent_ops.evidence.log import EvidenceWriteError
from kent_ops.evidence.system import StorageError
from kent_ops.service.rhythm import Timing
from kent_ops.service.storage_outage import StorageOutage

T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
FULL = EvidenceWriteError("could not commit to /e.sqlite: database or disk is full")


class Clocks:
    """The wall clock and the monotonic clock, moved together by hand."""

    def __init__(self) -> None:
        self.mono = 100.0

    def now(self) -> datetime:
        return T0 + timedelta(seconds=self.mono - 100.0)

    def monotonic(self) -> float:
        return self.mono


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()


def outage(clocks: Clocks, cause: str | None = "/: no space left on device") -> StorageOutage:
    return StorageOutage(
        Timing(retry_first_s=0.5, retry_max_s=4.0),
        Path("/e.sqlite"),
        now=clocks.now,
        mono=clocks.monotonic,
        probe=lambda: cause,
    )


def test_the_first_refusal_starts_the_outage_and_raises_an_alert(clocks: Clocks) -> None:
    o = outage(clocks)
    assert not o.failing
    alert = o.failed(FULL, held=3)
    assert o.failing
    assert o.since == T0
    assert o.error == f"{FULL} (/: no space left on device)"
    assert alert is not None
    assert (alert.id, alert.rule, alert.state) == ("S-0001", "evidence-storage", "active")
    assert alert.since == alert.raised_at == T0
    assert alert.severity == "data"
    assert alert.observed == {"error": o.error, "evidence": "/e.sqlite"}
    assert "cannot be written" in alert.message
    assert o.failed(FULL, held=3) is None  # the same outage: no second alert


def test_retries_back_off_by_doubling_up_to_the_maximum(clocks: Clocks) -> None:
    o = outage(clocks)
    delays = []
    for _ in range(6):
        o.failed(FULL, held=1)
        delays.append(o.retry_at - clocks.mono)
        assert not o.retry_due(clocks.mono)
        clocks.mono = o.retry_at
        assert o.retry_due(clocks.mono)
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_the_probe_logs_the_outage_and_its_alert_active_then_cleared(clocks: Clocks) -> None:
    o = outage(clocks)
    active = o.failed(FULL, held=2)
    clocks.mono += 7
    records = o.probe_records(held=5)
    assert records[0] == StorageError(error=o.error, since=T0.isoformat(), held=5)
    assert records[1] == active
    cleared = records[2]
    at = T0 + timedelta(seconds=7)
    assert isinstance(cleared, wire.Alert)
    assert (cleared.state, cleared.ended_at, cleared.cleared_at) == ("cleared", at, at)
    assert o.recovered(held=5) == cleared
    assert not o.failing
    assert o.alert is None


def test_a_failed_probe_keeps_the_outage_and_its_alert(clocks: Clocks) -> None:
    o = outage(clocks)
    active = o.failed(FULL, held=1)
    o.probe_records(held=1)
    assert o.failed(FULL, held=1) is None
    assert o.failing
    assert o.alert == active
    assert o.probe_records(held=1)[1] == active


def test_numbering_continues_past_the_alerts_the_log_holds(clocks: Clocks) -> None:
    o = outage(clocks)
    o.note_logged(wire.Alert(id="S-0004", rule="evidence-storage"))
    o.note_logged(wire.Alert(id="A-0009", rule="nurse-ratio"))
    o.note_logged(wire.Alert(id="S-not-a-number", rule="evidence-storage"))
    alert = o.failed(FULL, held=0)
    assert alert is not None
    assert alert.id == "S-0005"
    o.probe_records(held=0)
    o.recovered(held=0)
    again = o.failed(FULL, held=0)
    assert again is not None
    assert again.id == "S-0006"


def test_the_status_says_the_log_is_failing_only_while_it_is(clocks: Clocks) -> None:
    o = outage(clocks, cause=None)
    status = wire.Status(
        ts=T0, event="e", attendance=wire.Attendance(current=0), active_alerts=["A-0001"]
    )
    assert o.decorate(status, held=0) == status
    o.failed(FULL, held=4)
    told = o.decorate(status, held=4)
    assert told.evidence == wire.EvidenceHealth(ok=False, error=str(FULL), since=T0, held=4)
    assert told.active_alerts == ["A-0001", "S-0001"]
    o.probe_records(held=4)
    o.recovered(held=4)
    assert o.decorate(status, held=0).evidence is msgspec.UNSET
