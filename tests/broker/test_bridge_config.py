"""The remote property's broker configuration and the two ACLs, read line by line.

Whether Mosquitto runs them as intended is tests/integration/test_bridge.py; here the
generated text is held to what docs/protocol.md ("Remote properties: bridges") promises:
only that property's topics out, its orders and the aggregator's word in, QoS 1, a
persistent session, persistence, no-drop limits, the link's state, and the same topics
in the bridge's ``topic`` lines and in its account at the command post.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from mosquitto_support import mosquitto_options

from kent_ops.broker.acl import (
    People,
    acl_text,
    bridge_topics,
    property_acl_text,
    property_sensors,
    property_users,
    users_for,
)
from kent_ops.broker.bridge import BridgeSettings, bridge_config
from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.persistence import AUTOSAVE_CHANGES
from kent_ops.commands.cli import main
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import Topics

ROOT = Path(__file__).resolve().parents[2]
TWO = ROOT / "examples" / "permit-two-properties.toml"
T = Topics("kent-harvest-weekend-2027")
CENTRAL = BrokerAddress("broker.local", 8883, tls=True)


@pytest.fixture(scope="module")
def permit() -> Permit:
    return load_permit(TWO)


def settings(**changes: object) -> BridgeSettings:
    values: dict[str, object] = {
        "property_id": "camping-meadow",
        "central": CENTRAL,
        "password": "bridge-secret",
    }
    values.update(changes)
    return BridgeSettings(**values)  # type: ignore[arg-type]


def test_each_property_has_its_own_sensors_and_a_gate_between_two_stands_on_both(
    permit: Permit,
) -> None:
    assert property_sensors(permit, "camping-meadow") == {
        "meadow-road": "gate",
        "field-to-meadow": "gate",
        "camp-aid": "station",
    }
    assert property_sensors(permit, "overflow-parking") == {"overflow": "lot"}
    assert property_sensors(permit, "main-field") == {
        "north": "gate",
        "south": "gate",
        "field-to-meadow": "gate",
        "lot-a": "lot",
        "first-aid": "station",
    }


def test_the_bridge_forwards_only_its_propertys_sensors_and_receives_its_orders(
    permit: Permit,
) -> None:
    o = mosquitto_options(bridge_config(permit, settings(inspectors=("insp-1",))))
    out = [v.split()[0] for v in o["topic"] if v.endswith(" out 1")]
    inbound = [v.split()[0] for v in o["topic"] if v.endswith(" in 1")]
    assert len(out) + len(inbound) == len(o["topic"])  # every topic line at QoS 1
    assert out == [
        T.gate_count("meadow-road"),
        T.availability("meadow-road"),
        T.gate_count("field-to-meadow"),
        T.availability("field-to-meadow"),
        T.staff_badge("camp-aid"),
        T.staff_roster("camp-aid"),
        T.availability("camp-aid"),
        T.inspector("insp-1", "+"),
    ]
    assert inbound == [
        T.gate_command("meadow-road"),
        T.gate_command("field-to-meadow"),
        T.status,
        T.alerts_wildcard,
        T.aggregator_availability,
    ]
    everything = " ".join(o["topic"])
    for elsewhere in ("north", "south", "lot-a", "first-aid", "overflow"):
        assert f"/{elsewhere}/" not in everything
    assert "clerk" not in everything
    assert "notifier" not in everything


def test_the_bridge_is_qos_1_persistent_and_says_its_state_locally(permit: Permit) -> None:
    o = mosquitto_options(bridge_config(permit, settings()))
    single = {k: v[0] for k, v in o.items() if len(v) == 1}
    assert single["connection"] == "kent-ops-camping-meadow"
    assert single["bridge_protocol_version"] == "mqttv311"
    assert single["cleansession"] == "false"
    assert single["local_cleansession"] == "false"
    assert single["remote_clientid"] == "kent-bridge-kent-harvest-weekend-2027-camping-meadow"
    assert single["remote_username"] == "bridge-camping-meadow"
    assert single["remote_password"] == "bridge-secret"
    assert single["notifications"] == "true"
    assert single["notifications_local_only"] == "true"
    assert single["notification_topic"] == T.bridge_state("camping-meadow")
    assert single["persistence"] == "true"
    assert single["persistence_location"] == "/var/lib/mosquitto/"
    assert single["autosave_on_changes"] == "true"  # every N changes, not N seconds
    assert single["autosave_interval"] == str(AUTOSAVE_CHANGES)
    assert "persistent_client_expiration" not in o  # sessions never expire
    for limit in ("max_queued_messages", "max_queued_bytes", "max_inflight_bytes"):
        assert single[limit] == "0"  # unlimited: nothing is ever dropped
    assert single["max_inflight_messages"] == "20"  # bounded: the order is kept
    assert single["allow_anonymous"] == "false"
    assert single["acl_file"] == "/etc/mosquitto/kent-ops/acl-camping-meadow"
    assert single["password_file"] == "/etc/mosquitto/kent-ops/passwords-camping-meadow"
    assert single["listener"] == "1883"
    assert "certfile" not in o


def test_the_bridge_crosses_the_link_through_stunnel_not_mosquittos_own_tls(
    permit: Permit,
) -> None:
    """Mosquitto 2.0.11's TLS bridge hangs on a link dropped mid-handshake (docs/security.md)."""
    o = mosquitto_options(bridge_config(permit, settings()))
    assert o["address"] == ["127.0.0.1:18883"]  # stunnel, on the loopback
    tls = ("bridge_cafile", "bridge_capath", "bridge_certfile", "bridge_tls_version", "bridge_psk")
    assert not set(tls) & set(o)  # Mosquitto itself never speaks TLS on the link
    assert mosquitto_options(bridge_config(permit, settings(link_port=2999)))["address"] == [
        "127.0.0.1:2999"
    ]


def test_the_local_listener_can_take_tls_an_address_and_a_port(permit: Permit) -> None:
    o = mosquitto_options(
        bridge_config(permit, settings(tls=True, bind="10.0.0.2", etc_dir=Path("/e")))
    )
    assert o["listener"] == ["8883 10.0.0.2"]
    assert (o["cafile"], o["certfile"], o["keyfile"]) == (
        ["/e/ca.crt"],
        ["/e/server.crt"],
        ["/e/server.key"],
    )
    assert mosquitto_options(bridge_config(permit, settings(port=1999)))["listener"] == ["1999"]


def test_the_command_posts_acl_grants_the_bridge_exactly_what_it_carries(permit: Permit) -> None:
    people = People(inspectors=["insp-1"], bridges=["camping-meadow"])
    text = acl_text(permit, people)
    block = text.split("user bridge-camping-meadow\n", 1)[1].split("\n\n", 1)[0].splitlines()
    routes = bridge_topics(permit, "camping-meadow", ["insp-1"])
    assert block == [f"topic write {t}" for t in routes.out] + [
        f"topic read {t}" for t in routes.inbound
    ]
    assert "bridge-camping-meadow" in users_for(permit, people)
    # Without --bridge nothing changes.
    assert "bridge-" not in acl_text(permit, People(inspectors=["insp-1"]))


def test_the_propertys_acl_lists_its_sensors_deputies_and_inspectors_only(
    permit: Permit, tmp_path: Path
) -> None:
    manual = tmp_path / "permit.toml"
    manual.write_text(
        TWO.read_text()
        + '\n[[gates]]\nid = "meadow-road-manual"\nproperty = "camping-meadow"\n'
        + '\n[[gates]]\nid = "north-manual"\nproperty = "main-field"\n'
    )
    with_tally = load_permit(manual)
    text = property_acl_text(with_tally, "camping-meadow", ["insp-1"])
    users = [line.split()[1] for line in text.splitlines() if line.startswith("user ")]
    assert users == property_users(with_tally, "camping-meadow", ["insp-1"])
    assert users == [
        "dashboard",
        "sensor-meadow-road",
        "sensor-field-to-meadow",
        "sensor-meadow-road-manual",
        "sensor-camp-aid",
        "deputy-meadow-road",
        "deputy-field-to-meadow",
        "inspector-insp-1",
    ]
    assert f"topic write {T.gate_count('meadow-road-manual')}" in text
    # Every gate's deputy reads its order there; only the one with a tally writes.
    deputy = text.split("user deputy-field-to-meadow\n", 1)[1].split("\n\n", 1)[0]
    assert deputy == f"topic read {T.everything}"
    assert "north" not in text
    assert "kent-ops-aggregator" not in text


def _write_password(tmp_path: Path, mode: int = 0o600) -> Path:
    path = tmp_path / "bridge.password"
    path.write_text("bridge-secret\n")
    path.chmod(mode)
    return path


def test_deploy_bridge_writes_a_private_config_and_the_propertys_acl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "meadow.conf"
    code = main(
        ["deploy", "bridge", "--permit", str(TWO), "--property", "camping-meadow",
         "--central", "mqtts://broker.local:8883", "--password-file",
         str(_write_password(tmp_path)), "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert "remote_password bridge-secret" in out.read_text()
    acl = tmp_path / "acl-camping-meadow"
    assert acl.read_text() == property_acl_text(load_permit(TWO), "camping-meadow")
    assert mosquitto_options(out.read_text())["autosave_interval"] == [str(AUTOSAVE_CHANGES)]
    err = capsys.readouterr().err
    assert "--bridge camping-meadow" in err
    assert "sensor-meadow-road" in err


def test_deploy_bridge_takes_another_number_of_changes_between_saves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "meadow.conf"
    code = main(
        ["deploy", "bridge", "--permit", str(TWO), "--property", "camping-meadow",
         "--central", "mqtts://broker.local:8883", "--password-file",
         str(_write_password(tmp_path)), "--autosave-changes", "5", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    o = mosquitto_options(out.read_text())
    assert (o["autosave_on_changes"], o["autosave_interval"]) == (["true"], ["5"])
    assert "so at most 4" in out.read_text()


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"--property": "back-forty"}, "property 'back-forty' is not in the permit MG-2027-007"),
        ({"--central": "mqtt://broker.local:1883"}, "must be mqtts://host:port"),
        ({"--central": "mqtts://bridge-x@broker.local"}, "takes no user name or password"),
        ({"--central": "mqtts://u:pw@broker.local"}, "takes no user name or password"),
        ({"--central": "broker.local"}, "must start with mqtt:// or mqtts://"),
        ({"--inspector": "a/b"}, "cannot be used in an MQTT topic"),
        ({"--port": "18883"}, "--link-port 18883 is the broker's own port"),
    ],
)
def test_deploy_bridge_refuses_bad_input_in_one_sentence(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    changes: dict[str, str],
    problem: str,
) -> None:
    args = {
        "--permit": str(TWO),
        "--property": "camping-meadow",
        "--central": "mqtts://broker.local:8883",
        "--password-file": str(_write_password(tmp_path)),
        **changes,
    }
    code = main(["deploy", "bridge", *[x for kv in args.items() for x in kv]])
    err = capsys.readouterr().err
    assert code == 2
    assert problem in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_deploy_bridge_refuses_a_password_file_others_may_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["deploy", "bridge", "--permit", str(TWO), "--property", "camping-meadow",
         "--central", "mqtts://broker.local:8883",
         "--password-file", str(_write_password(tmp_path, 0o644))]
    )  # fmt: skip
    assert code == 2
    assert "may be read by others" in capsys.readouterr().err


def test_deploy_acl_refuses_a_bridge_for_an_unknown_property(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["deploy", "acl", "--permit", str(TWO), "--bridge", "back-forty"])
    assert code == 2
    err = capsys.readouterr().err
    assert "property 'back-forty' is not in the permit" in err
    assert "main-field, overflow-parking, camping-meadow" in err
