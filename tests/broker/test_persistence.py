"""Every broker kent-ops ships for the field saves to disk the same way: every N changes.

What a SIGKILL then loses is measured by benchmarks/broker_window.py and held by
tests/integration/test_broker_window.py (docs/security.md, "The field broker's window").
"""

from __future__ import annotations

from pathlib import Path

from mosquitto_support import mosquitto_options

from kent_ops.broker.bridge import BridgeSettings, bridge_config
from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.persistence import AUTOSAVE_CHANGES, FIELD_AUTOSAVE, autosave_lines
from kent_ops.core.permit import load_permit

ROOT = Path(__file__).resolve().parents[2]


def test_the_field_autosave_counts_changes_not_seconds() -> None:
    assert autosave_lines() == ["autosave_on_changes true", f"autosave_interval {AUTOSAVE_CHANGES}"]
    assert FIELD_AUTOSAVE == "autosave_on_changes true\nautosave_interval 20\n"
    assert autosave_lines(5)[1] == "autosave_interval 5"


def test_every_shipped_field_broker_saves_every_n_changes() -> None:
    two = load_permit(ROOT / "examples" / "permit-two-properties.toml")
    configs = {
        p.name: p.read_text() for p in sorted((ROOT / "deploy" / "mosquitto").glob("*.conf"))
    }
    configs["deploy bridge"] = bridge_config(
        two,
        BridgeSettings(
            property_id="camping-meadow",
            central=BrokerAddress("broker.local", 8883, tls=True),
            password="bridge-secret",
        ),
    )
    assert len(configs) == 3
    for name, text in configs.items():
        o = mosquitto_options(text)
        assert o.get("persistence") == ["true"], name
        assert o.get("autosave_on_changes") == ["true"], name
        assert o.get("autosave_interval") == [str(AUTOSAVE_CHANGES)], name
        assert "persistent_client_expiration" not in o, name  # sessions never expire
