"""The broker password comes from a private file or the environment, never argv."""

from __future__ import annotations

from pathlib import Path

import pytest

from kent_ops.broker.credentials import ENV_PASSWORD, ENV_URL, read_password_file, resolve_broker
from kent_ops.core.errors import UsageError


def private(tmp_path: Path, text: str = "s3cret\n", mode: int = 0o600) -> Path:
    path = tmp_path / "password"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_private_password_file_gives_its_first_line(tmp_path: Path) -> None:
    assert read_password_file(private(tmp_path, "s3cret\nignored\n")) == "s3cret"


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660])
def test_a_password_file_others_may_read_is_refused_saying_how_to_fix_it(
    tmp_path: Path, mode: int
) -> None:
    path = private(tmp_path, mode=mode)
    with pytest.raises(UsageError, match=f"may be read by others .*chmod 600 {path}"):
        read_password_file(path)


@pytest.mark.parametrize(
    ("setup", "problem"),
    [
        (lambda p: p, "no such file"),
        (lambda p: (p.mkdir(), p)[1], "not a regular file"),
        (lambda p: (p.write_text("\n"), p.chmod(0o600), p)[2], "is empty"),
    ],
)
def test_unusable_password_files_are_one_sentence(
    tmp_path: Path, setup: object, problem: str
) -> None:
    path = setup(tmp_path / "pw")  # type: ignore[operator]
    with pytest.raises(UsageError, match=problem):
        read_password_file(path)


def test_the_password_file_joins_the_url_without_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = resolve_broker(
        "mqtts://aggregator@broker.local:8883", str(private(tmp_path)), environ={}
    )
    assert (address.username, address.password, address.tls) == ("aggregator", "s3cret", True)
    assert capsys.readouterr().err == ""


def test_the_environment_gives_the_url_and_the_password() -> None:
    env = {ENV_URL: "mqtt://kent-ops-aggregator@127.0.0.1:1883", ENV_PASSWORD: "from-env"}
    address = resolve_broker(None, environ=env)
    assert (address.host, address.username, address.password) == (
        "127.0.0.1",
        "kent-ops-aggregator",
        "from-env",
    )


def test_a_password_inside_the_environment_url_is_used_silently(
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = resolve_broker(None, environ={ENV_URL: "mqtt://u:p%40ss@h:1884"})
    assert (address.username, address.password, address.port) == ("u", "p@ss", 1884)
    assert capsys.readouterr().err == ""


def test_the_environment_password_serves_the_same_broker_named_on_the_command_line() -> None:
    env = {ENV_URL: "mqtt://u:kept@h:1884"}
    assert resolve_broker("mqtt://u@h:1884", environ=env).password == "kept"
    assert resolve_broker("mqtt://other@h:1884", environ=env).password is None


def test_a_password_on_the_command_line_still_works_but_warns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = resolve_broker("mqtt://u:typed@h:1883", environ={ENV_PASSWORD: "ignored"})
    assert address.password == "typed"
    err = capsys.readouterr().err
    assert "warning" in err
    assert "--password-file" in err
    assert "typed" not in err


def test_without_anything_the_default_broker_has_no_password() -> None:
    address = resolve_broker(None, environ={})
    assert (address.host, address.port, address.password) == ("localhost", 1883, None)
