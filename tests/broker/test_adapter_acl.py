"""The adapter's account in the broker's access list, for a permit with rented devices."""

from __future__ import annotations

from pathlib import Path

from kent_ops.broker.acl import ADAPTER_USER, People, acl_text, users_for
from kent_ops.core.permit import load_permit
from kent_ops.core.wire import Topics

ROOT = Path(__file__).resolve().parents[2]
T = Topics("kent-summer-fest-2027")


def _block(text: str, user: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"user {user}")
    end = next(i for i in range(start, len(lines)) if not lines[i])
    return lines[start + 1 : end]


def test_the_adapter_reads_the_devices_topics_and_writes_exactly_their_sensors_topics() -> None:
    permit = load_permit(ROOT / "examples" / "permit-lorawan.toml")
    text = acl_text(permit, People())
    assert ADAPTER_USER in users_for(permit, People())
    assert _block(text, ADAPTER_USER) == [
        "topic read application/+/device/0004a30b001c1234/event/up",
        f"topic write {T.gate_count('north')}",
        f"topic write {T.adapter_raw('north')}",
        "topic read v3/kent-parking@ttn/devices/lot-a-sensor/up",
        f"topic write {T.lot_occupancy('lot-a')}",
        f"topic write {T.adapter_raw('lot-a')}",
    ]
    # a rented device writes its own topic, never the kent-ops topic the adapter writes
    assert _block(text, "sensor-north") == [
        "topic write application/+/device/0004a30b001c1234/event/up",
        f"topic write {T.availability('north')}",
    ]
    assert f"topic write {T.gate_count('south')}" in _block(text, "sensor-south")


def test_a_permit_without_rented_devices_has_no_adapter_account() -> None:
    permit = load_permit(ROOT / "examples" / "permit.toml")
    assert ADAPTER_USER not in users_for(permit, People())
    assert ADAPTER_USER not in acl_text(permit, People())
