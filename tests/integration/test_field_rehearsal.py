"""The documented way to stand the secured field set-up up on one laptop works: TLS,
passwords, the permit's access list, the aggregator, serve over HTTPS, and the simulated
day published through its own account, all counted in a log that verifies."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from kent_ops.broker.mosquitto import free_port
from kent_ops.evidence.log import verify

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


@pytest.mark.timeout(180)
@pytest.mark.slow
def test_the_rehearsal_runs_the_secured_set_up_and_counts_the_simulated_day(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "rehearsal"
    done = subprocess.run(
        [str(ROOT / "scripts" / "field-rehearsal"), "--dir", str(folder),
         "--port", str(free_port()), "--web-port", str(free_port()),
         "--speed", "600", "--duration", "8"],
        capture_output=True, text=True, timeout=150, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "field-rehearsal: running" in done.stderr
    assert "messages published to mqtts://simulator@localhost:" in done.stdout
    evidence = folder / "evidence.sqlite"
    checked = verify(evidence)
    assert checked.ok, checked.line()
    count = checked.count
    with sqlite3.connect(evidence) as db:
        accepted = db.execute(
            "SELECT count(*) FROM records WHERE kind = 'message' AND accepted = 1"
        ).fetchone()[0]
    assert accepted > 100
    assert count > accepted
    assert "on https://127.0.0.1:" in (folder / "serve.log").read_text()
    acl = (folder / "broker" / "acl").read_text()
    assert "user simulator" in acl
    assert "topic write kent/kent-summer-fest-2027/status" not in acl.split("user simulator")[1]
    secrets = folder / "passwords"
    assert (secrets.stat().st_mode & 0o777) == 0o700
