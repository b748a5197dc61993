"""`kent-ops demo --headless --duration 8` on a machine with and without Mosquitto.

The demo prints the commands that attach a gate view and another dashboard to it, and
on exit the commands that verify and report on its evidence; each is run here as
printed, in a fresh shell whose PATH knows nothing of the virtual environment. Eight
seconds at 600x (80 minutes of the day, about a thousand records) prove each path end
to end; a longer run asserts nothing more.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kent_ops.broker.mosquitto import mosquitto_binary
from kent_ops.evidence.log import verify

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
ROOT = Path(__file__).resolve().parents[2]


def _path_without_mosquitto() -> str:
    keep = [
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "mosquitto").exists()
    ]
    return os.pathsep.join(keep)


def _run_demo(tmp_path: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=path)
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "demo", "--headless", "--duration", "8",
         "--speed", "600", "--out", str(tmp_path / "demo")],
        capture_output=True, text=True, timeout=100, env=env, check=False,
    )  # fmt: skip


KENT_OPS = Path(sys.executable).parent / "kent-ops"
"""The kent-ops script beside the interpreter: what the demo must name in full."""


def _printed(stdout: str, label: str) -> str:
    """The command printed after ``label`` in the demo's output."""
    match = re.search(rf"^\s*{re.escape(label)}\s+(.+)$", stdout, re.MULTILINE)
    assert match is not None, stdout
    return match.group(1)


def _in_a_fresh_shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as a person pastes it: sh, a plain PATH, no virtual environment."""
    return subprocess.run(
        command, shell=True, capture_output=True, text=True, timeout=100, check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)}, cwd=cwd,
    )  # fmt: skip


def _check_attach(stdout: str) -> None:
    """The broker and the commands that attach to it, with kent-ops by its full path."""
    broker = re.search(r"(mqtt://127\.0\.0\.1:\d+)", stdout)
    assert broker is not None, stdout
    assert "Attach from another terminal:" in stdout
    event = "--event kent-summer-fest-2027"
    assert f"{KENT_OPS} gate north {event} --broker {broker.group(1)}" in stdout
    assert f"{KENT_OPS} dashboard {event} --broker {broker.group(1)}" in stdout


def _check(result: subprocess.CompletedProcess[str], tmp_path: Path, broker_word: str) -> None:
    assert result.returncode == 0, result.stderr
    assert broker_word in result.stdout
    _check_attach(result.stdout)
    match = re.search(r"attendance ([\d,]+) \(peak", result.stdout)
    assert match is not None, result.stdout
    assert int(match.group(1).replace(",", "")) > 0
    evidence = tmp_path / "demo" / "evidence.sqlite"
    assert f"evidence log: {evidence}" in result.stdout
    checked = verify(evidence)
    assert checked.ok
    assert checked.count > 100
    verify_command = _printed(result.stdout, "verify it:")
    assert verify_command.startswith(f"{KENT_OPS} verify ")
    verified = _in_a_fresh_shell(verify_command, tmp_path)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith(f"OK {checked.count} ")
    assert _printed(result.stdout, "report:").startswith(f"{KENT_OPS} report --permit /")


@pytest.mark.slow
def test_demo_with_mosquitto_on_the_path(tmp_path: Path) -> None:
    binary = mosquitto_binary()
    if binary is None:
        pytest.fail("this test needs mosquitto installed (scripts/test installs it)")
    # Debian puts it in /usr/sbin, which a non-root PATH may lack: put it on the PATH.
    path = os.pathsep.join([str(Path(binary).parent), os.environ.get("PATH", "")])
    result = _run_demo(tmp_path, path)
    _check(result, tmp_path, "Mosquitto on")
    report = _in_a_fresh_shell(_printed(result.stdout, "report:"), tmp_path)
    assert report.returncode in (0, 1), report.stderr  # 1: the festival's breaches found
    assert (tmp_path / "demo" / "report").is_dir()


@pytest.mark.slow
def test_demo_without_mosquitto_uses_the_embedded_broker(tmp_path: Path) -> None:
    path = _path_without_mosquitto()
    assert shutil.which("mosquitto", path=path) is None
    _check(_run_demo(tmp_path, path), tmp_path, "embedded broker (amqtt)")


@pytest.mark.slow
def test_demo_through_the_adapter_with_a_lorawan_gate_and_lot(tmp_path: Path) -> None:
    binary = mosquitto_binary()
    if binary is None:
        pytest.fail("this test needs mosquitto installed (scripts/test installs it)")
    path = os.pathsep.join([str(Path(binary).parent), os.environ.get("PATH", "")])
    result = subprocess.run(
        [sys.executable, "-m", "kent_ops", "demo", "--lorawan", "--headless", "--duration",
         "8", "--speed", "600", "--out", str(tmp_path / "demo")],
        capture_output=True, text=True, timeout=100, env=dict(os.environ, PATH=path),
        check=False,
    )  # fmt: skip
    _check(result, tmp_path, "Mosquitto on")
    assert "north: a LoRaWAN device (chirpstack-v4)" in result.stdout
    assert "lot-a: a LoRaWAN device (ttn-v3)" in result.stdout
    assert "rejected messages 0" in result.stdout
    assert "permit-lorawan.toml" in _printed(result.stdout, "report:")
    from kent_ops.evidence.log import read_records

    records = [r for r in read_records(tmp_path / "demo" / "evidence.sqlite") if r.topic]
    raw = [r for r in records if r.topic.endswith("/adapter/north/raw")]
    translated = [r for r in records if r.topic.endswith("/gate/north/count")]
    assert raw
    assert translated
    assert all(r.accepted for r in raw)
    assert not any(r.topic.endswith("/sensor/north/availability") for r in records)


@pytest.mark.timeout(240)
@pytest.mark.slow
def test_tally_taps_in_the_demo_raise_no_false_alarm_and_demote_no_breach(
    tmp_path: Path, broker: Any
) -> None:
    """A deputy taps the manual tally during the 60x demo with a wall-clock device: its
    silence between taps is no outage, so no sensor-offline alert for it, and no breach
    of the day is called uncertain because of it."""
    from live_support import wait_until

    from kent_ops.broker.client import parse_broker_url
    from kent_ops.report.build import build_report
    from sensors.gate_counter import GateCounter

    out = tmp_path / "demo"
    demo = subprocess.Popen(
        [sys.executable, "-m", "kent_ops", "demo", "--headless", "--speed", "1500",
         "--broker", broker.url, "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    tally = GateCounter("kent-summer-fest-2027", "north-manual", heartbeat_s=None)
    try:
        time.sleep(6)  # the demo's aggregator is up, the day under way
        link = tally.connect(parse_broker_url(broker.url))
        wait_until(lambda: link.online, 15, "the tally's link")
        for _ in range(5):
            tally.count(entered=1)  # kept and sent once it has announced itself online
            time.sleep(2)
        stdout, stderr = demo.communicate(timeout=200)
    finally:
        tally.close()
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
    assert demo.returncode == 0, stderr
    # The day's end is said, once, before the summary: not an outage.
    assert stdout.count("The simulated day is over (23:30 EDT); its summary follows.") == 1
    assert stdout.index("The simulated day is over") < stdout.index("Summary")
    permit = ROOT / "examples" / "permit.toml"
    data = build_report(permit, out / "evidence.sqlite", tmp_path / "report").data
    assert not [f for f in data.findings if f.subject == "north-manual"]
    assert not [f for f in data.findings if f.uncertain]
    assert [f for f in data.findings if f.is_breach], "the festival breaches, proven"
    assert data.incomplete == []  # the log covers the permitted window to its end
    assert data.clean_up.word == "not yet due"  # its deadline is days after the log's end
    report = subprocess.run(
        [sys.executable, "-m", "kent_ops", "report", "--permit", str(permit),
         "--evidence", str(out / "evidence.sqlite"), "--out", str(tmp_path / "cli-report")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert report.returncode == 1, report.stderr  # 1: findings (breaches) in the report
    assert "clean-up not yet due;" in report.stdout
    assert "incomplete" not in report.stdout
