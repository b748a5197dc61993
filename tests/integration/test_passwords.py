"""No password on a command line: a running aggregator's argv never holds it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import permit_text, wait_until

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.credentials import ENV_PASSWORD, ENV_URL
from kent_ops.broker.mosquitto import MosquittoBroker, free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]
PASSWORD = "correct horse battery staple 42"
USER = "kent-ops-aggregator"


@pytest.fixture
def locked_broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """Mosquitto that lets in only USER with PASSWORD."""
    if shutil.which("mosquitto_passwd") is None:
        pytest.fail("mosquitto_passwd is needed (Debian package mosquitto)")
    passwords = tmp_path / "passwords"
    passwords.touch()
    subprocess.run(
        ["mosquitto_passwd", "-b", str(passwords), USER, PASSWORD], check=True, timeout=10
    )
    passwords.chmod(0o644)
    port = free_port()
    listener = f"allow_anonymous false\npassword_file {passwords}\nlistener {port} 127.0.0.1\n"
    broker = MosquittoBroker(tmp_path / "broker", port=port, listener_config=listener)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _run(tmp_path: Path, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    permit = tmp_path / "permit.toml"
    permit.write_text(permit_text())
    log = (tmp_path / "run.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "kent_ops", "run", "--permit", str(permit),
         "--evidence", str(tmp_path / "evidence.sqlite"), *argv],
        stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, **env},
    )  # fmt: skip


def _wait_for_line(
    path: Path, text: str, proc: subprocess.Popen[bytes], timeout: float = 20
) -> str:
    def logged() -> str | None:
        log = path.read_text()
        if text in log:
            return log
        if proc.poll() is not None:
            raise AssertionError(f"the aggregator exited ({proc.returncode}): {log}")
        return None

    return wait_until(  # type: ignore[no-any-return]
        logged, timeout, lambda: f"{text!r} in the log: {path.read_text()}", every=0.1
    )


@pytest.mark.parametrize("how", ["environment", "password-file"])
def test_the_aggregator_connects_with_a_password_that_is_not_in_its_argv(
    tmp_path: Path, locked_broker: MosquittoBroker, how: str
) -> None:
    url = f"mqtt://{USER}@127.0.0.1:{locked_broker.port}"
    if how == "environment":
        argv, env = [], {ENV_URL: url, ENV_PASSWORD: PASSWORD}
    else:
        secret = tmp_path / "password"
        secret.write_text(PASSWORD + "\n")
        secret.chmod(0o600)
        argv, env = ["--broker", url, "--password-file", str(secret)], {}
    proc = _run(tmp_path, argv, env)
    try:
        log = _wait_for_line(tmp_path / "run.log", "connected to", proc)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert PASSWORD.encode() not in cmdline
        assert b"kent_ops" in cmdline  # it is the aggregator's own command line we read
        assert PASSWORD not in log
    finally:
        proc.terminate()
        assert proc.wait(20) == 0


def test_a_password_file_others_may_read_is_refused_before_anything_starts(
    tmp_path: Path, locked_broker: MosquittoBroker
) -> None:
    secret = tmp_path / "password"
    secret.write_text(PASSWORD)
    secret.chmod(0o644)
    url = f"mqtt://{USER}@127.0.0.1:{locked_broker.port}"
    proc = _run(tmp_path, ["--broker", url, "--password-file", str(secret)], {})
    assert proc.wait(20) == 2
    err = (tmp_path / "run.log").read_text()
    assert "may be read by others" in err
    assert "chmod 600" in err
    assert "Traceback" not in err


def test_a_password_in_the_url_still_works_and_is_warned_about(
    tmp_path: Path, locked_broker: MosquittoBroker
) -> None:
    address = parse_broker_url(f"mqtt://127.0.0.1:{locked_broker.port}")
    url = f"mqtt://{USER}:{PASSWORD.replace(' ', '%20')}@{address.host}:{address.port}"
    proc = _run(tmp_path, ["--broker", url], {})
    try:
        log = _wait_for_line(tmp_path / "run.log", "connected to", proc)
        assert "warning: a password in --broker is visible" in log
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
