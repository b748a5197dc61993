"""stunnel's configuration for a property's bridge, its systemd unit, and what deploy writes.

How stunnel behaves with it on a real link (a flapping one, a stranger's certificate, a
certificate for another name) is tests/integration/test_bridge_flapping.py; here the
text is held to what docs/security.md ("A flapping bridge link") promises: the loopback
in, the command post's CA and name checked, TLS 1.2 at least, bounded waits, and the
systemd files in deploy/ are what ``deploy bridge`` writes for the README's example.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kent_ops.broker.bridge import BridgeSettings, broker_dropin, tunnel_for
from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.tunnel import stunnel_config, stunnel_unit
from kent_ops.commands.cli import main

ROOT = Path(__file__).resolve().parents[2]
TWO = ROOT / "examples" / "permit-two-properties.toml"
EXAMPLE = BridgeSettings(
    property_id="camping-meadow",
    central=BrokerAddress("broker.local", 8883, tls=True),
    password="bridge-secret",
)


def options(text: str) -> dict[str, list[str]]:
    """Each option of an stunnel configuration, by section (``""``: global)."""
    found: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith("["):
            section = line.strip("[]") + "."
            continue
        key, _, value = line.partition("=")
        found.setdefault(section + key.strip(), []).append(value.strip())
    return found


def test_stunnel_takes_the_bridge_on_the_loopback_and_checks_the_command_post() -> None:
    o = options(stunnel_config(tunnel_for(EXAMPLE)))
    bridge = {k.removeprefix("kent-ops-bridge."): v for k, v in o.items() if "." in k}
    assert bridge["client"] == ["yes"]
    assert bridge["accept"] == ["127.0.0.1:18883"]  # the loopback only
    assert bridge["connect"] == ["broker.local:8883"]
    assert bridge["CAfile"] == ["/etc/mosquitto/kent-ops/command-post-ca.crt"]  # the event's CA
    assert bridge["verifyChain"] == ["yes"]
    assert bridge["checkHost"] == ["broker.local"]  # and the name in its certificate
    assert "checkIP" not in bridge
    assert "sni" not in bridge  # stunnel sends the connect host's name
    assert bridge["sslVersionMin"] == ["TLSv1.2"]
    assert "verifyPeer" not in bridge  # no pinned certificate: the CA and the name decide
    assert "cert" not in bridge  # the bridge logs in with its password, inside TLS


def test_stunnel_stays_in_the_foreground_for_systemd_and_gives_up_on_a_stalled_link() -> None:
    o = options(stunnel_config(tunnel_for(EXAMPLE)))
    assert (o["foreground"], o["syslog"], o["pid"]) == (["yes"], ["no"], [""])
    assert o["kent-ops-bridge.TIMEOUTconnect"] == ["15"]
    assert o["kent-ops-bridge.TIMEOUTbusy"] == ["15"]  # the TLS handshake
    assert o["kent-ops-bridge.delay"] == ["yes"]  # an unresolvable name at boot is no failure


def test_a_command_post_by_address_is_checked_by_address_and_sent_no_server_name() -> None:
    settings = BridgeSettings(
        property_id="camping-meadow",
        central=BrokerAddress("10.0.0.1", 18884, tls=True),
        password="x",
        etc_dir=Path("/e"),
        link_port=2999,
    )
    o = options(stunnel_config(tunnel_for(settings)))
    assert o["kent-ops-bridge.checkIP"] == ["10.0.0.1"]
    assert o["kent-ops-bridge.sni"] == [""]
    assert "kent-ops-bridge.checkHost" not in o
    assert o["kent-ops-bridge.connect"] == ["10.0.0.1:18884"]
    assert o["kent-ops-bridge.accept"] == ["127.0.0.1:2999"]
    assert o["kent-ops-bridge.CAfile"] == ["/e/command-post-ca.crt"]


def test_the_unit_runs_stunnel_as_the_brokers_user_and_restarts_it_whatever_ends_it() -> None:
    unit = stunnel_unit(tunnel_for(EXAMPLE))
    assert "ExecStart=/usr/bin/stunnel4 /etc/mosquitto/kent-ops/stunnel.conf\n" in unit
    assert "User=mosquitto\n" in unit  # reads the CA certificate, root:mosquitto 640
    assert "Restart=always\n" in unit
    assert "Type=simple\n" in unit  # with foreground = yes
    assert "Wants=kent-ops-stunnel.service\n" in broker_dropin()


def test_deploy_bridge_writes_stunnels_config_its_unit_and_the_brokers_drop_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    password = tmp_path / "bridge.password"
    password.write_text("bridge-secret\n")
    password.chmod(0o600)
    out = tmp_path / "meadow" / "mosquitto.conf"
    out.parent.mkdir()
    code = main(
        ["deploy", "bridge", "--permit", str(TWO), "--property", "camping-meadow",
         "--central", "mqtts://broker.local:8883", "--password-file", str(password),
         "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    files = {p.name: p for p in out.parent.iterdir()}
    assert set(files) == {
        "mosquitto.conf",
        "acl-camping-meadow",
        "stunnel.conf",
        "kent-ops-stunnel.service",
        "kent-ops-broker.conf",
    }
    assert files["stunnel.conf"].read_text() == stunnel_config(tunnel_for(EXAMPLE))
    assert "bridge-secret" not in files["stunnel.conf"].read_text()
    assert stat.S_IMODE(files["stunnel.conf"].stat().st_mode) == 0o644
    assert files["kent-ops-stunnel.service"].read_text() == stunnel_unit(tunnel_for(EXAMPLE))
    assert files["kent-ops-broker.conf"].read_text() == broker_dropin()
    assert "address 127.0.0.1:18883" in out.read_text()
    err = capsys.readouterr().err
    assert "stunnel4" in err
    assert "stunnel.conf" in err


def test_the_files_in_deploy_are_those_of_the_readmes_example() -> None:
    tunnel = tunnel_for(EXAMPLE)
    assert (ROOT / "deploy" / "stunnel" / "stunnel.conf").read_text() == stunnel_config(tunnel)
    assert (ROOT / "deploy" / "kent-ops-stunnel.service").read_text() == stunnel_unit(tunnel)
    assert (ROOT / "deploy" / "mosquitto.service.d" / "kent-ops.conf").read_text() == (
        broker_dropin()
    )
