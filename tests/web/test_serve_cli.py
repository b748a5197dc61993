"""``kent-ops serve``'s argument checks: one sentence on stderr and exit 2, before serving."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kent_ops.web.accounts import KdfCost, make_account, save_accounts


@pytest.fixture
def users(tmp_path: Path) -> Path:
    path = tmp_path / "users.json"
    save_accounts(path, {"a": make_account("a", "inspector", "pw", cost=KdfCost(n=2**10))})
    return path


def serve(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "serve", *argv],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "needs --event"),
        (["--event", "Bad Event"], "lower-case letters"),
        (["--event", "e", "--listen", "0.0.0.0:8443"], "passwords in clear"),
        (["--event", "e", "--listen", "nowhere"], "must be HOST:PORT"),
        (["--event", "e", "--tls-cert", "c.pem"], "go together"),
        (["--event", "e", "--tls-cert", "c.pem", "--tls-key", "k.pem"], "cannot use the cert"),
        (["--event", "e", "--broker", "http://x"], "mqtt://"),
        (["--event", "e", "--ca-file", "/nonexistent/ca.crt"], "no such file"),
        (["--event", "e", "--app-memory-mb", "64"], "must be at least 128"),
        (["--event", "e", "--app-memory-mb", "lots"], "not a whole number"),
    ],
)
def test_bad_arguments_are_one_sentence_and_exit_2(users: Path, argv: list[str], says: str) -> None:
    result = serve(*argv, "--users", str(users))
    assert result.returncode == 2
    assert says in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_missing_or_empty_users_file_is_refused(tmp_path: Path) -> None:
    missing = serve("--event", "e", "--users", str(tmp_path / "none.json"))
    assert missing.returncode == 2
    assert "serve users add" in missing.stderr
    empty = tmp_path / "empty.json"
    save_accounts(empty, {})
    nobody = serve("--event", "e", "--users", str(empty))
    assert nobody.returncode == 2
    assert "nobody in it" in nobody.stderr
