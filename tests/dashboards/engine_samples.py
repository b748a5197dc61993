"""A real engine's status and alerts, for the form and law tests and their snapshots.

Not hand-made samples: a festival afternoon is fed to :class:`kent_ops.core.engine.Engine`
through the core tests' :class:`Driver` (payloads whose ``ts`` this module writes down),
so every figure, alert, note and checklist mark on screen is one the engine produced;
likewise an afternoon of the example assembly over three properties.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from core.core_support import NY, QUICK, Driver, local, permit_variant
from wire_support import clerk_permit, gate_count

from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.permit import load_permit

EVENT = "kent-summer-fest-2027"
AFTERNOON = local(14, 0)
"""When the day described here starts: 14:00 in Kent, inside the permitted window."""


@dataclass(frozen=True, slots=True)
class EngineDay:
    """What the engine published after the afternoon below, and the instant it ends."""

    status: wire.Status
    alerts: list[wire.Alert]
    now: datetime
    commands: dict[str, wire.GateCommand]
    """Each gate's order, as the engine gives it to the deputies."""

    def alert_id(self, rule: str) -> str:
        return next(a.id for a in self.alerts if a.rule == rule)


def afternoon(*, revoked: bool = False) -> EngineDay:
    """3,120 persons, six nurses for seven needed, lot-a 98% full, a note and an ack.

    With ``revoked`` the Town Clerk revoked the permit at 14:05 by resolution TB-2027-41.
    """
    driver = Driver(permit_variant(QUICK))
    t = AFTERNOON
    driver.staff(t, doctors=1, nurses=6, security=20)
    driver.gate("south", t, 1_600, 60)
    driver.present(3_120, t)
    driver.lot("lot-a", t, 590)
    driver.lot("lot-b", t, 420)
    t += timedelta(seconds=30)
    driver.tick(t)
    nurses = _alert(driver, "nurse-ratio")
    lot = _alert(driver, "lot-full")
    assert driver.inspector("insp-2", "ack", t, alert=lot, comment="Overflow to lot-b").accepted
    assert driver.inspector(
        "insp-2", "note", t, text="Nurse tent B unstaffed", alert=nurses
    ).accepted
    assert driver.inspector(
        "insp-1", "inspection", t, item="C(1)(h)", result="deficient", note="common cup"
    ).accepted
    if revoked:
        t = local(14, 5)
        body = clerk_permit(t, "revoked", t, "TB-2027-41", "no doctor on site since 14:00")
        assert driver.feed(driver.topics.clerk_permit("town-clerk"), body, t).accepted
    t += timedelta(seconds=5)
    driver.tick(t)
    driver.engine.collect_changes()
    alerts = [alert for _, alert in sorted(driver.engine.alerts.items())]
    engine = driver.engine
    return EngineDay(engine.status(), alerts, t + timedelta(seconds=2), engine.commands())


def _alert(driver: Driver, rule: str) -> str:
    found = driver.alerts(rule)
    assert found, f"the engine raised no {rule} alert"
    return str(found[0]["id"])


TWO_PROPERTIES = Path(__file__).resolve().parents[2] / "examples" / "permit-two-properties.toml"


def three_properties() -> EngineDay:
    """The example assembly over three properties, an August afternoon: persons on the
    main field and the camping meadow (one gate between them), none in the overflow."""
    permit = load_permit(TWO_PROPERTIES)
    engine = Engine(permit, clock="sensor")
    topics = wire.Topics(permit.event_id)
    t = datetime(2027, 8, 14, 14, 0, tzinfo=NY)
    for gate, in_total, out_total in (
        ("north", 2_000, 100),
        ("meadow-road", 300, 0),
        ("field-to-meadow", 150, 20),
    ):
        fed = engine.feed(topics.gate_count(gate), gate_count(1, t, in_total, out_total), t)
        assert fed.accepted, fed.reason
    t += timedelta(seconds=5)
    engine.tick(t)
    engine.collect_changes()
    alerts = [alert for _, alert in sorted(engine.alerts.items())]
    return EngineDay(engine.status(), alerts, t + timedelta(seconds=2), engine.commands())
