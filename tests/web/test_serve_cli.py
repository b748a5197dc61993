"""``kent-ops serve``'s argument checks: one sentence on stderr and exit 2, before serving."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import kent_ops

from kent_ops.web.accounts import KdfCost, make_account, save_accounts


@pytest.fixture
def users(tmp_path: Path) -> Path:
    path = tmp_path / "users.json"
    save_accounts(path, {"a": make_account("a", "inspector", "pw", cost=KdfCost(n=2**10))})
    return path


def serve(*argv: str) -> subprocess.CompletedProcess[str]:
    """The installed entry point, as a shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "serve", *argv],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "kent-ops serve needs --event ID (the [event] id of the permit)"),
        (["--event", "Bad Event"],
         "event id 'Bad Event' must be lower-case letters, digits and dashes"),
        (["--event", "e", "--listen", "0.0.0.0:8443"],
         "serving on 0.0.0.0 without TLS would send passwords in clear over the network; "
         "give --tls-cert and --tls-key (kent-ops deploy certs makes them)"),
        (["--event", "e", "--listen", "nowhere"],
         "--listen 'nowhere' must be HOST:PORT, e.g. 0.0.0.0:8443"),
        (["--event", "e", "--tls-cert", "c.pem"],
         "--tls-cert and --tls-key go together: give both or neither"),
        (["--event", "e", "--tls-cert", "/nonexistent/c.pem", "--tls-key", "k.pem"],
         "cannot use the certificate /nonexistent/c.pem: [Errno 2] No such file or directory"),
        (["--event", "e", "--broker", "http://x"],
         "broker URL 'http://x' must start with mqtt:// or mqtts://, e.g. mqtt://localhost:1883"),
        (["--event", "e", "--ca-file", "/nonexistent/ca.crt"],
         "--ca-file /nonexistent/ca.crt: no such file"),
        (["--event", "e", "--app-memory-mb", "64"], "--app-memory-mb 64 must be at least 128"),
        (["--event", "e", "--app-memory-mb", "lots"],
         "--app-memory-mb 'lots' is not a whole number of MiB"),
    ],
)  # fmt: skip
def test_bad_arguments_are_one_sentence_and_exit_2(
    users: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    result = kent_ops(capsys, "serve", *argv, "--users", str(users))
    assert (result.returncode, result.stderr) == (2, f"kent-ops: {says}\n")
    assert result.stdout == ""


def test_the_entry_point_refuses_without_a_traceback(users: Path) -> None:
    result = serve("--event", "Bad Event", "--users", str(users))
    assert result.returncode == 2
    assert result.stderr == (
        "kent-ops: event id 'Bad Event' must be lower-case letters, digits and dashes\n"
    )


def test_a_missing_or_empty_users_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    none = tmp_path / "none.json"
    missing = kent_ops(capsys, "serve", "--event", "e", "--users", str(none))
    assert (missing.returncode, missing.stderr) == (
        2,
        f"kent-ops: users file {none}: no such file (add people with: "
        f"kent-ops serve users add NAME --role ROLE --users {none})\n",
    )
    empty = tmp_path / "empty.json"
    save_accounts(empty, {})
    nobody = kent_ops(capsys, "serve", "--event", "e", "--users", str(empty))
    assert (nobody.returncode, nobody.stderr) == (
        2,
        f"kent-ops: users file {empty} has nobody in it: add people with serve users add\n",
    )


def test_a_port_taken_already_is_one_sentence_and_exit_2(users: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve("--event", "e", "--listen", f"127.0.0.1:{port}", "--users", str(users))
    assert (result.returncode, result.stderr) == (
        2,
        f"kent-ops: cannot listen on 127.0.0.1:{port}: Address already in use\n",
    )
