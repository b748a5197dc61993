"""`kent-ops demo --headless --duration 20` on a machine with and without Mosquitto."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kent_ops.broker.mosquitto import mosquitto_binary
from kent_ops.evidence.log import verify

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


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
        [sys.executable, "-m", "kent_ops", "demo", "--headless", "--duration", "20",
         "--speed", "600", "--out", str(tmp_path / "demo")],
        capture_output=True, text=True, timeout=100, env=env, check=False,
    )  # fmt: skip


def _check(result: subprocess.CompletedProcess[str], tmp_path: Path, broker_word: str) -> None:
    assert result.returncode == 0, result.stderr
    assert broker_word in result.stdout
    match = re.search(r"attendance ([\d,]+) \(peak", result.stdout)
    assert match is not None, result.stdout
    assert int(match.group(1).replace(",", "")) > 0
    evidence = tmp_path / "demo" / "evidence.sqlite"
    assert f"evidence log: {evidence}" in result.stdout
    assert "kent-ops report --permit" in result.stdout
    checked = verify(evidence)
    assert checked.ok
    assert checked.count > 100


def test_demo_with_mosquitto_on_the_path(tmp_path: Path) -> None:
    binary = mosquitto_binary()
    if binary is None:
        pytest.fail("this test needs mosquitto installed (scripts/test installs it)")
    # Debian puts it in /usr/sbin, which a non-root PATH may lack: put it on the PATH.
    path = os.pathsep.join([str(Path(binary).parent), os.environ.get("PATH", "")])
    _check(_run_demo(tmp_path, path), tmp_path, "Mosquitto on")


def test_demo_without_mosquitto_uses_the_embedded_broker(tmp_path: Path) -> None:
    path = _path_without_mosquitto()
    assert shutil.which("mosquitto", path=path) is None
    _check(_run_demo(tmp_path, path), tmp_path, "embedded broker (amqtt)")
