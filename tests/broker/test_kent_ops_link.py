"""``kent-ops-link`` and the files ``kent-ops deploy bridge`` writes to run it.

The relay's behaviour on a real link (a flapping one, a stranger's certificate) is
tests/integration/test_bridge_flapping.py; here: that the deployed file is the module
and runs on a bare Python, its TLS settings, its bad input, and that the systemd files
in deploy/ are what ``deploy bridge`` writes for the README's example.
"""

from __future__ import annotations

import socket
import ssl
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kent_ops.broker import link
from kent_ops.broker.bridge import BridgeSettings, broker_dropin, link_unit
from kent_ops.broker.client import BrokerAddress
from kent_ops.commands.cli import main
from kent_ops.commands.deploy import link_script, make_certs

ROOT = Path(__file__).resolve().parents[2]
TWO = ROOT / "examples" / "permit-two-properties.toml"
EXAMPLE = BridgeSettings(
    property_id="camping-meadow",
    central=BrokerAddress("broker.local", 8883, tls=True),
    password="bridge-secret",
)


def test_the_tls_leg_trusts_only_the_given_ca_checks_the_name_and_needs_tls_1_2(
    tmp_path: Path,
) -> None:
    certs = make_certs(tmp_path, ["broker.local"])
    context = link.tls_context(certs["ca_crt"])
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert [c["subject"] for c in context.get_ca_certs()] == [
        ((("commonName", "kent-ops field CA"),),)
    ]


def test_the_deployed_link_is_the_module_and_runs_on_a_bare_python(tmp_path: Path) -> None:
    """-I -S: no site-packages, as on the property's machine (Debian's python3 only)."""
    script = link_script()
    assert script.startswith("#!/usr/bin/python3\n")
    assert script.split("\n", 1)[1] == Path(link.__file__).read_text()
    path = tmp_path / "kent-ops-link.py"
    path.write_text(script)
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(path), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--cafile" in done.stdout


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--to", "broker.local:8883"], "the following arguments are required: --cafile"),
        (["--to", "broker.local", "--cafile", "x"], "'broker.local' must be HOST:PORT"),
        (["--to", "b:99999", "--cafile", "x"], "'b:99999' must be HOST:PORT"),
        (["--to", "b:1", "--cafile", "/nonexistent/ca.crt"], "cannot use /nonexistent/ca.crt"),
    ],
)
def test_the_link_refuses_bad_input_in_one_sentence(
    capsys: pytest.CaptureFixture[str], argv: list[str], problem: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(link.main(argv))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert problem in err
    assert [line for line in err.splitlines() if line.startswith("kent-ops link:")] == [
        err.splitlines()[-1]
    ]
    assert "Traceback" not in err


def test_the_link_says_so_when_its_port_is_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    certs = make_certs(tmp_path, ["broker.local"])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = link.main(
            ["--listen", f"127.0.0.1:{port}", "--to", "b:1", "--cafile", str(certs["ca_crt"])]
        )
    assert code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_deploy_bridge_writes_the_link_its_unit_and_the_brokers_drop_in(tmp_path: Path) -> None:
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
    assert files["kent-ops-link.py"].read_text() == link_script()
    assert stat.S_IMODE(files["kent-ops-link.py"].stat().st_mode) == 0o755
    assert files["kent-ops-link.service"].read_text() == link_unit(EXAMPLE)
    assert files["kent-ops-broker.conf"].read_text() == broker_dropin()
    assert "address 127.0.0.1:18883" in out.read_text()


def test_the_systemd_files_in_deploy_are_those_of_the_readmes_example() -> None:
    assert (ROOT / "deploy" / "kent-ops-link.service").read_text() == link_unit(EXAMPLE)
    assert (ROOT / "deploy" / "mosquitto.service.d" / "kent-ops.conf").read_text() == (
        broker_dropin()
    )
    unit = link_unit(EXAMPLE)
    assert "--to broker.local:8883" in unit
    assert "--cafile /etc/mosquitto/kent-ops/command-post-ca.crt" in unit
    assert "Restart=always" in unit
    assert "Wants=kent-ops-link.service" in broker_dropin()
