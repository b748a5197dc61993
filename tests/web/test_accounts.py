"""The users file: scrypt hashes with their salt and cost, 0600, and the users commands."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import kent_ops

from kent_ops.core.errors import UsageError
from kent_ops.web.accounts import (
    DEFAULT_KDF,
    KdfCost,
    load_accounts,
    make_account,
    save_accounts,
    verify_sign_in,
)

CHEAP = KdfCost(n=2**10, r=8, p=1)
PERMIT = Path(__file__).resolve().parents[2] / "examples" / "permit.toml"
"""Fast enough for unit tests; the file stores each account's own cost."""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_password_is_checked_against_a_salted_hash_and_never_stored(tmp_path: Path) -> None:
    one = make_account("insp-1", "inspector", "s3cret words", cost=CHEAP)
    two = make_account("insp-2", "inspector", "s3cret words", cost=CHEAP)
    assert one.verify("s3cret words")
    assert not one.verify("s3cret word")
    assert not one.verify("")
    assert one.salt != two.salt
    assert one.digest != two.digest  # same password, different salt
    path = tmp_path / "users.json"
    save_accounts(path, {"insp-1": one})
    text = path.read_text()
    assert "s3cret" not in text
    assert _mode(path) == 0o600


def test_each_account_keeps_its_own_cost_and_the_default_is_memory_hard(tmp_path: Path) -> None:
    assert 128 * DEFAULT_KDF.n * DEFAULT_KDF.r >= 32 * 2**20  # 32 MiB per guess
    path = tmp_path / "users.json"
    save_accounts(path, {"a": make_account("a", "clerk", "pw", cost=CHEAP)})
    entry = json.loads(path.read_text())["users"][0]
    assert (entry["kdf"], entry["n"], entry["r"], entry["p"]) == ("scrypt", 2**10, 8, 1)
    loaded = load_accounts(path)["a"]
    assert loaded.cost == CHEAP
    assert loaded.verify("pw")


def test_roles_decide_the_broker_user_the_app_and_the_seat() -> None:
    inspector = make_account("insp-1", "inspector", "pw", cost=CHEAP)
    clerk = make_account("clerk-1", "clerk", "pw", cost=CHEAP)
    deputy = make_account("jsmith", "deputy", "pw", gate="north", cost=CHEAP)
    assert (inspector.broker_user, inspector.app) == ("inspector-insp-1", "dashboard")
    assert (clerk.broker_user, clerk.app) == ("clerk-clerk-1", "dashboard")
    assert (deputy.broker_user, deputy.app, deputy.seat) == ("deputy-north", "gate", "gate:north")


@pytest.mark.parametrize(
    ("name", "role", "gate", "says"),
    [
        ("a/b", "inspector", None, "letters, digits"),
        ("x", "mayor", None, "must be one of"),
        ("x", "deputy", None, "needs --gate"),
        ("x", "inspector", "north", "--gate is for deputies"),
        ("x", "deputy", "no+rth", "the gate"),
    ],
)
def test_bad_accounts_are_refused_with_a_reason(
    name: str, role: str, gate: str | None, says: str
) -> None:
    with pytest.raises(UsageError, match=says):
        make_account(name, role, "pw", gate=gate, cost=CHEAP)


def test_an_unknown_name_and_a_wrong_password_look_the_same(tmp_path: Path) -> None:
    accounts = {"insp-1": make_account("insp-1", "inspector", "right", cost=CHEAP)}
    assert verify_sign_in(accounts, "insp-1", "right") is accounts["insp-1"]
    assert verify_sign_in(accounts, "insp-1", "wrong") is None
    assert verify_sign_in(accounts, "nobody", "right") is None
    assert verify_sign_in(accounts, "insp-1", "x" * 5000) is None


def test_a_users_file_others_may_read_or_that_is_not_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    save_accounts(path, {"a": make_account("a", "clerk", "pw", cost=CHEAP)})
    path.chmod(0o640)
    with pytest.raises(UsageError, match="chmod 600"):
        load_accounts(path)
    path.chmod(0o600)
    path.write_text('{"users": []}')
    with pytest.raises(UsageError, match="not a kent-ops users file"):
        load_accounts(path)
    path.write_text('{"format": "kent-ops-users", "users": [{"name": "a"}]}')
    with pytest.raises(UsageError, match="not a valid account"):
        load_accounts(path)
    with pytest.raises(UsageError, match="no such file"):
        load_accounts(tmp_path / "missing.json")
    assert load_accounts(tmp_path / "missing.json", missing_ok=True) == {}


def _users(tmp_path: Path, *argv: str, answers: str = "") -> subprocess.CompletedProcess[str]:
    """``kent-ops serve users …`` with no terminal: getpass then reads stdin."""
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "serve", "users", *argv,
         "--users", str(tmp_path / "users.json")],
        input=answers, capture_output=True, text=True, timeout=60,
        start_new_session=True,  # no controlling terminal, as in a script or CI
        env={**os.environ, "KENT_OPS_USERS": ""},
    )  # fmt: skip


def test_users_add_list_remove_from_the_command_line(tmp_path: Path) -> None:
    added = _users(tmp_path, "add", "jsmith", "--role", "deputy", "--gate", "north",
                   "--permit", str(PERMIT), answers="gate pass 1\ngate pass 1\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "deputy-north" in added.stdout
    path = tmp_path / "users.json"
    assert _mode(path) == 0o600
    assert "gate pass 1" not in path.read_text()
    assert load_accounts(path)["jsmith"].verify("gate pass 1")
    listed = _users(tmp_path, "list")
    assert listed.stdout.split() == ["jsmith", "deputy", "north", "deputy-north"]
    removed = _users(tmp_path, "remove", "jsmith")
    assert removed.returncode == 0
    assert load_accounts(path) == {}
    again = _users(tmp_path, "remove", "jsmith")
    assert again.returncode == 2
    assert "there is no user 'jsmith'" in again.stderr


def test_users_add_refuses_two_different_passwords_and_changes_nothing(tmp_path: Path) -> None:
    result = _users(tmp_path, "add", "insp-1", "--role", "inspector", answers="one\ntwo\n")
    assert result.returncode == 2
    assert "the two passwords differ" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "users.json").exists()


def test_users_add_refuses_a_bad_name_before_asking_for_a_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    users = str(tmp_path / "users.json")
    bad = kent_ops(capsys, "serve", "users", "add", "insp 1", "--role", "inspector",
                   "--users", users)  # fmt: skip
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (  # refused before asking for a password
        "kent-ops: the name 'insp 1' must be 1 to 64 letters, digits, '.', '_' or '-' "
        "(it becomes part of a broker user name and of MQTT topics)\n"
    )
    assert not (tmp_path / "users.json").exists()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--gate", "nrth", "--permit", str(PERMIT)],
         "gate 'nrth' is not in the permit MG-2027-003 (its gates: north, south)"),
        (["--gate", "north-manual", "--permit", str(PERMIT)],
         "north-manual is a manual tally, not a gate: its deputy stands at the gate it "
         "counts for (north)"),
        (["--gate", "north"],
         "a deputy needs --permit P as well: their --gate must be one of the permit's gates"),
    ],
)  # fmt: skip
def test_users_add_refuses_a_deputy_at_a_gate_the_permit_does_not_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """Refused before a password is asked for, so it runs in this process."""
    users = str(tmp_path / "users.json")
    result = kent_ops(
        capsys, "serve", "users", "add", "jsmith", "--role", "deputy", *argv, "--users", users
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"kent-ops: {says}\n"
    assert not (tmp_path / "users.json").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_root_changing_the_file_leaves_it_the_services(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    save_accounts(path, {})
    os.chown(path, 65534, 65534)  # the service's user, after the README's chown
    save_accounts(path, {"a": make_account("a", "clerk", "pw", cost=CHEAP)})
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)
    assert _mode(path) == 0o600
