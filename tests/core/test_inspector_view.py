"""What the inspector's page shows, made once for every phone: pure functions of the status.

The page draws this view and decides nothing else, so what it must show is checked
here: the first screen's parts and their order (the figure with the order, the permit's
standing, active breaches first, staffing against what is required), each alert in
full (figures, citation, evidence record and hash), the gates and lots as the terminal
lists them, the checklist, and why the figures may be out of date.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from kent_ops.core import wire
from kent_ops.core.connection import ConnectionState
from kent_ops.core.inspector_view import (
    CLEARED_SHOWN,
    attendance_bar,
    forecast_text,
    inspector_view,
)
from kent_ops.core.tagged import TAGS

NOW = datetime(2027, 7, 4, 18, 3, 7, tzinfo=UTC)
HASH = "ab" * 32


def status(**changes: Any) -> wire.Status:
    values: dict[str, Any] = {
        "ts": NOW - timedelta(seconds=2),
        "event": "fest",
        "event_name": "Kent Summer Music Festival",
        "timezone": "America/New_York",
        "attendance": wire.Attendance(
            current=3120,
            entries=3400,
            exits=280,
            peak=3200,
            max_at_one_time=4000,
            max_collective=9000,
        ),  # fmt: skip
        "admit": False,
        "hold_at": 3000,
        "permit": wire.PermitState(number="MG-2027-003", status="issued"),
        "assembly": wire.AssemblyState(on=True, window=0),
        "window": wire.WindowState(inside=True),
        "medical": wire.Medical(
            doctors_on_duty=1, doctors_required=1, nurses_on_duty=4, nurses_required=7
        ),
        "security": wire.Security(on_duty=8, declared=8),
        "parking": wire.Parking(
            spaces_provided=900, spaces_required=780, occupied=600, vehicles_at_one_time=1100
        ),  # fmt: skip
        "gates": {
            "north": wire.GateState(in_=2400, out=200, net=2200, per_minute=14.0, last_seen=NOW),
            "south": wire.GateState(
                in_=1000, out=80, net=920, online=False, last_seen=NOW - timedelta(seconds=90)
            ),  # fmt: skip
            "north-manual": wire.GateState(manual=True),
        },
        "lots": {"lot-a": wire.LotState(capacity=600, occupied=590, free=10, share=0.983)},
        "checklist_items": [
            wire.ChecklistItemInfo(
                item="C(1)(a)",
                paragraph="C(1) Drinking water",
                text="Drinking water readily available",
                cite="permit:C(1)(a)",
            ),
            wire.ChecklistItemInfo(
                item="C(2)(a)",
                paragraph="C(2) Toilets",
                text="Toilets conveniently located",
                cite="permit:C(2)(a)",
            ),
        ],  # fmt: skip
        "checklist": {
            "C(2)(a)": wire.ChecklistMark(result="deficient", by="insp-1", at=NOW, note="locked")
        },
        "pending": [wire.PendingCondition(rule="lot-full", subject="lot-a", since=NOW)],
    }
    values.update(changes)
    return wire.Status(**values)


def alert(alert_id: str, **changes: Any) -> wire.Alert:
    values: dict[str, Any] = {
        "id": alert_id,
        "rule": "nurse-ratio",
        "cite": "permit:C(9)",
        "severity": "breach",
        "since": NOW - timedelta(minutes=5),
        "raised_at": NOW - timedelta(minutes=4),
        "observed": {"nurses_on_duty": 4, "attendance": 3120},
        "required": {"nurses": 7},
        "message": "4 nurses on duty; 3,120 persons need 7 (permit:C(9))",
        "evidence": wire.EvidenceRef(record=1234, hash=HASH),
    }
    values.update(changes)
    return wire.Alert(**values)


def up() -> ConnectionState:
    return ConnectionState(link="up", status_ts=NOW, aggregator_online=True, up_at=0.0)


def view(
    the_status: wire.Status | None = None,
    alerts: dict[str, wire.Alert] | None = None,
    connection: ConnectionState | None = None,
) -> dict[str, Any]:
    made = inspector_view(
        "fest", status=the_status if the_status is not None else status(),
        alerts=alerts if alerts is not None else {}, connection=connection or up(),
        now=NOW, monotonic=100.0,
    )  # fmt: skip
    return json.loads(msgspec.json.encode(made))  # as the page receives it


def text(line: list[list[str]]) -> str:
    return "".join(piece for piece, _ in line)


def test_the_first_screen_the_figure_the_order_and_the_permits_standing() -> None:
    v = view()
    assert v["figures"] is True
    assert v["problem"] is None
    assert v["clock"] == "14:03 EDT"
    att = v["attendance"]
    assert (att["figure"], att["order"], att["level"]) == ("3,120", "HOLD", "ok")
    assert text(att["limits"]) == "max 4,000 · threshold 500 · peak 3,200"
    assert att["bar"] == {"fill": 0.78, "mark": 0.125}
    assert text(v["permit"]["words"]) == "MG-2027-003 issued"
    assert v["permit"]["words"][1] == ["issued", "good-strong"]
    assert v["permit"]["alarm"] is None
    assert view(status(admit=True))["attendance"]["order"] == "ADMIT"


def test_a_revoked_permit_is_an_alarm_naming_its_resolution() -> None:
    revoked = wire.PermitState(number="MG-2027-003", status="revoked", since=NOW,
                               resolution="TB-2027-41")  # fmt: skip
    alarm = view(status(permit=revoked))["permit"]["alarm"]
    assert alarm[0] == [" PERMIT MG-2027-003 REVOKED ", "banner"]
    assert "resolution TB-2027-41" in text(alarm)
    assert "HOLD from 500 persons (permit:A, G)" in text(alarm)


def test_active_breaches_come_first_then_pending_then_the_ended_and_cleared() -> None:
    alerts = {
        "A-0001": alert(
            "A-0001",
            rule="security-staffing",
            severity="warning",
            cite="permit:B(8)",
            since=NOW - timedelta(minutes=1),
        ),  # fmt: skip
        "A-0002": alert("A-0002", since=NOW - timedelta(minutes=9)),
        "A-0003": alert("A-0003", state="cleared", cleared_at=NOW),
        "A-0004": alert(
            "A-0004",
            rule="doctor-on-duty",
            since=NOW - timedelta(minutes=2),
            acknowledged=[wire.Acknowledgement(by="insp-2", at=NOW)],
        ),  # fmt: skip
    }
    items = view(alerts=alerts)["alerts"]["items"]
    assert [i.get("id", "pending") for i in items] == [
        "A-0004", "A-0002", "A-0001", "pending", "A-0003"
    ]  # fmt: skip
    first = items[0]
    assert first["mark"] == ["● BREACH", "alarm"]
    assert first["flashing"] is False  # acknowledged
    assert items[1]["flashing"] is True
    assert "✓ insp-2" in text(first["head"])
    assert "✗ not acked" in text(items[1]["head"])
    assert items[1]["body"] == "4 nurses on duty; 3,120 persons need 7 (permit:C(9))"
    assert items[3]["mark"] == ["… PENDING", "caution-italic"]
    assert items[-1]["active"] is False
    assert view(alerts=alerts)["alerts"]["title"] == "Alerts (3 active, 1 pending, 4 in all)"


def test_an_alert_in_full_has_its_figures_citation_evidence_record_and_hash() -> None:
    detail = view(alerts={"A-0002": alert("A-0002")})["alerts"]["details"]["A-0002"]
    facts = {f["label"]: " / ".join(text(line) for line in f["lines"]) for f in detail["facts"]}
    assert facts["Observed"] == "nurses on duty 4 · attendance 3,120"
    assert facts["Required"] == "nurses 7"
    assert facts["Evidence"] == "record 1234"
    assert facts["Hash"] == HASH
    assert facts["Acknowledged"] == "no"
    assert (detail["record"], detail["hash"], detail["cite"]) == (1234, HASH, "permit:C(9)")
    assert "permit:C(9)" in text(detail["title"])
    assert [what for _, what in detail["history"]] == ["condition began to hold", "alert raised"]
    hash_fact = next(f for f in detail["facts"] if f["label"] == "Hash")
    assert hash_fact["fold"] is True


def test_a_phone_lists_the_newest_cleared_alerts_and_says_how_many_more() -> None:
    cleared = {
        f"A-{n:04d}": alert(f"A-{n:04d}", state="cleared", cleared_at=NOW - timedelta(minutes=n))
        for n in range(CLEARED_SHOWN + 5)
    }
    alerts = view(alerts=cleared)["alerts"]
    assert len([i for i in alerts["items"] if not i.get("pending")]) == CLEARED_SHOWN
    assert alerts["more"] == 5
    assert alerts["items"][1]["id"] == "A-0000"  # the newest, after the pending condition


def test_staffing_gates_and_lots_read_as_on_the_terminal() -> None:
    v = view()
    rows = {r["label"]: r for r in v["staffing"]["rows"]}
    assert rows["Nurses"] == {"label": "Nurses", "have": "4", "limit": "of 7 required",
                              "tag": "alarm"}  # fmt: skip
    assert rows["Doctors"]["tag"] == "warn"  # 1 of 1: at its limit, amber
    assert v["staffing"]["title"] == "Staffing & parking · assembly on"
    gates = {r["key"]: r for r in v["gates"]["rows"]}
    assert v["gates"]["title"] == "Gates (3, 1 down)"
    assert gates["south"]["down"] is True
    assert gates["south"]["cells"][0] == ["✗", "alarm"]
    assert gates["south"]["cells"][-1] == ["OFF 1 min", "alarm"]
    assert gates["north-manual"]["cells"][-1] == ["not used", "dim"]  # never a fault
    assert gates["north-manual"]["down"] is False
    lot = v["lots"]["rows"][0]
    assert lot["cells"][-1] == ["98%", "alarm"]


def test_the_checklist_groups_its_items_and_names_the_breach_a_deficiency_holds() -> None:
    deficient = alert("A-0009", rule="facility-deficient", subject="C(2)(a)",
                      cite="permit:C(2)(a), permit:G")  # fmt: skip
    checklist = view(alerts={"A-0009": deficient})["checklist"]
    assert checklist["summary"].startswith("Checklist: 2 items · 0 ok · 1 deficient")
    water, toilets = checklist["groups"]
    assert (water["paragraph"], water["deficient"]) == ("C(1) Drinking water", 0)
    item = toilets["items"][0]
    assert (item["item"], item["result"], item["alert"]) == ("C(2)(a)", "deficient", "A-0009")
    assert item["mark"] == ["✗ DEFICIENT", "alarm"]
    assert item["note"] == ["“locked”", "alarm-soft"]
    assert water["items"][0]["mark"] == ["· unmarked", "dim"]


def test_without_a_status_the_view_says_what_it_waits_for() -> None:
    waiting = inspector_view("fest", status=None, alerts={},
                             connection=ConnectionState(link="connecting"), now=NOW,
                             monotonic=1.0)  # fmt: skip
    assert waiting["figures"] is False
    assert "attendance" not in waiting
    assert waiting["problem"] == "Connecting to the broker… (no figures yet)"
    down = ConnectionState(link="down", reason="not authorised as inspector-x", refused=True)
    stale = view(connection=down)
    assert stale["problem"].startswith("The broker refused the connection: not authorised")


def test_the_bar_and_the_forecast() -> None:
    assert attendance_bar(3120, 4000, 500) == (0.78, 0.125)
    assert attendance_bar(5000, 4000, 500) == (1.0, 0.1)  # past the maximum: full
    assert attendance_bar(0, 0) == (0.0, None)
    assert forecast_text(12 * 60) == "HOLD in about 12 min"
    assert forecast_text(20) == "HOLD in about 1 min"
    assert forecast_text(None) is None
    assert forecast_text(45 * 60) is None  # beyond half an hour: not said
    assert forecast_text(True) is None


def test_every_tag_in_the_view_is_one_a_screen_knows() -> None:
    alerts = {
        "A-0002": alert("A-0002"),
        "A-0003": alert("A-0003", state="cleared", cleared_at=NOW),
        "A-0009": alert("A-0009", rule="facility-deficient", subject="C(2)(a)"),
    }
    revoked = wire.PermitState(number="MG-2027-003", status="revoked", resolution="TB-1")
    v = view(status(permit=revoked, window=wire.WindowState(inside=False)), alerts)
    lines = [v["attendance"]["limits"], v["attendance"]["flags"], v["permit"]["alarm"],
             v["permit"]["words"], [v["permit"]["outside"]]]  # fmt: skip
    for item in v["alerts"]["items"]:
        lines += [[item["mark"]], item["head"]]
    for detail in v["alerts"]["details"].values():
        lines.append(detail["title"])
        lines += [line for fact in detail["facts"] for line in fact["lines"]]
    lines += [row["cells"] for table in ("gates", "lots") for row in v[table]["rows"]]
    for group in v["checklist"]["groups"]:
        lines += [[i["mark"]] + ([i["note"]] if i["note"] else []) for i in group["items"]]
    tags = {tag for line in lines for _, tag in line} | {r["tag"] for r in v["staffing"]["rows"]}
    assert tags <= set(TAGS)
    assert {"alarm", "banner", "cite", "alarm-soft", "dim", "warn"} <= tags
