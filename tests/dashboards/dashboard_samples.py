"""A fixed status, alerts and gate commands as the aggregator publishes them.

Each comes two ways: ``*_data`` is the JSON shape (what a test publishes on the
broker) and the plain name is the typed wire record the feed decodes it into (what
the panels and apps take). Fixed figures and times, so snapshots and assertions
repeat: the status is taken at ``STATUS_TS`` (14:03:05 in New York) and the tests'
clock stands two seconds later.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from kent_ops.core import wire

EVENT = "kent-summer-fest-2027"
STATUS_TS = datetime(2027, 7, 4, 18, 3, 5, tzinfo=UTC)
NOW = STATUS_TS + timedelta(seconds=2)


def iso(moment: datetime) -> str:
    return moment.isoformat()


def ago(seconds: float) -> str:
    return iso(STATUS_TS - timedelta(seconds=seconds))


def status_data(**changes: Any) -> dict[str, Any]:
    """The fixture status as JSON data; keyword arguments replace top-level keys."""
    base: dict[str, Any] = {
        "ts": iso(STATUS_TS),
        "event": EVENT,
        "event_name": "Kent Summer Music Festival",
        "timezone": "America/New_York",
        "permit": {"number": "MG-2027-003", "status": "issued"},
        "window": {"inside": True, "start": ago(4 * 3600), "end": ago(-5 * 3600)},
        "assembly": {"on": True, "window": 0},
        "attendance": {
            "current": 3120,
            "entries": 4410,
            "exits": 1290,
            "peak": 3300,
            "max_at_one_time": 4000,
            "threshold": 500,
            "uncertain": True,
        },
        "admit": True,
        "parking": {
            "spaces_provided": 1050,
            "spaces_required": 780,
            "occupied": 1010,
            "vehicles_at_one_time": 1100,
        },
        "medical": {
            "doctors_on_duty": 1,
            "doctors_required": 1,
            "nurses_on_duty": 6,
            "nurses_required": 7,
        },
        "security": {"on_duty": 18, "declared": 20},
        "sensors": {"north": {"kind": "gate", "online": True, "last_seen": ago(2)}},
        "gates": {
            "north": {
                "in": 2210,
                "out": 640,
                "net": 1570,
                "per_minute": 14.0,
                "last_seen": ago(2),
                "online": True,
                "manual": False,
            },
            "south": {
                "in": 2188,
                "out": 650,
                "net": 1538,
                "per_minute": 9.5,
                "last_seen": ago(95),
                "online": False,
                "manual": False,
            },
            "north-manual": {
                "in": 12,
                "out": 0,
                "net": 12,
                "per_minute": 0.0,
                "last_seen": ago(20),
                "online": True,
                "manual": True,
            },
        },
        "lots": {
            "lot-a": {
                "capacity": 600,
                "occupied": 590,
                "free": 10,
                "share": 590 / 600,
                "online": True,
                "last_seen": ago(5),
            },
            "lot-b": {
                "capacity": 450,
                "occupied": 420,
                "free": 30,
                "share": 420 / 450,
                "online": True,
                "last_seen": ago(7),
            },
        },
        "active_alerts": ["A-0003", "A-0004"],
        "pending": [{"rule": "security-staffing", "since": ago(4)}],
        "rejected": 2,
        "notes": [
            {"by": "insp-2", "at": ago(60), "text": "Nurse tent B unstaffed", "alert": "A-0004"}
        ],
        "adjustments": [],
        "checklist": {},
    }
    base.update(copy.deepcopy(changes))
    return base


def status(**changes: Any) -> wire.Status:
    """The fixture status, typed as the feed hands it on."""
    return msgspec.convert(status_data(**changes), wire.Status)


def alert_data(alert_id: str = "A-0004", **changes: Any) -> dict[str, Any]:
    """The nurse-ratio breach as JSON data (keyword arguments replace keys)."""
    base: dict[str, Any] = {
        "id": alert_id,
        "rule": "nurse-ratio",
        "subject": None,
        "cite": "permit:C(9)",
        "severity": "breach",
        "state": "active",
        "since": ago(300),
        "raised_at": ago(290),
        "ended_at": None,
        "cleared_at": None,
        "observed": {"nurses_on_duty": 6, "attendance": 3120},
        "required": {"nurses": 7},
        "message": "6 nurses on duty; 3,120 persons need 7 (permit:C(9))",
        "acknowledged": [],
        "evidence": {"record": 18233, "hash": "9f2c" + "0" * 60},
        "uncertain": False,
        "worst": {"observed": {"nurses_on_duty": 5, "attendance": 3300}, "required": {}},
    }
    base.update(copy.deepcopy(changes))
    return base


def alert(alert_id: str = "A-0004", **changes: Any) -> wire.Alert:
    """The nurse-ratio breach, typed."""
    return msgspec.convert(alert_data(alert_id, **changes), wire.Alert)


def alerts_data() -> list[dict[str, Any]]:
    """An unacknowledged breach, an acknowledged warning and a cleared data alert."""
    return [
        alert_data(),
        alert_data(
            "A-0003",
            rule="lot-full",
            subject="lot-a",
            cite="permit:C(6)",
            severity="warning",
            since=ago(600),
            raised_at=ago(590),
            observed={"occupied": 590, "capacity": 600},
            required={"share_below": 0.95},
            message="lot-a is 98% full (590 of 600) (permit:C(6))",
            acknowledged=[{"by": "insp-2", "at": ago(500), "comment": "Overflow to lot-b"}],
            evidence={"record": 17001, "hash": "ab12" + "0" * 60},
            worst={"observed": {"occupied": 595}, "required": {}},
        ),
        alert_data(
            "A-0001",
            rule="sensor-offline",
            subject="south",
            cite="—",
            severity="data",
            state="cleared",
            since=ago(3000),
            raised_at=ago(2990),
            ended_at=ago(2900),
            cleared_at=ago(2870),
            observed={"silent_s": 75},
            required={"stale_after_s": 60},
            message="south silent for 75 s",
            evidence={"record": 9000, "hash": "cd34" + "0" * 60},
            worst={"observed": {"silent_s": 100}, "required": {}},
        ),
    ]


def alerts() -> list[wire.Alert]:
    """The three alerts, typed."""
    return [msgspec.convert(a, wire.Alert) for a in alerts_data()]


def history(points: int = 60) -> list[wire.Status]:
    """Statuses over the last hour (one a minute) ending with the fixture status."""
    out = []
    for i in range(points):
        minutes = points - 1 - i
        current = 1200 + int(1920 * i / (points - 1))
        att = {**status_data()["attendance"], "current": current}
        out.append(status(ts=ago(60 * minutes), attendance=att))
    return out


def command_data(admit: bool = True, **changes: Any) -> dict[str, Any]:
    """A gate command as JSON data."""
    base: dict[str, Any] = {
        "admit": admit,
        "attendance": 3120 if admit else 4010,
        "hold_at": 4000,
        "resume_below": 3960,
        "reason": "below hold_at" if admit else "attendance at hold_at (permit:B(2))",
    }
    base.update(changes)
    return base


def command(admit: bool = True, **changes: Any) -> wire.GateCommand:
    """A gate command, typed."""
    return msgspec.convert(command_data(admit, **changes), wire.GateCommand)
