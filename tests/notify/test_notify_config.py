"""The notify config file: private or refused, every key checked, no URL ever quoted back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kent_ops.commands.cli import main
from kent_ops.core.errors import UsageError
from kent_ops.notify.config import Retry, load_config
from kent_ops.notify.delivery import apprise_accepts

ROOT = Path(__file__).resolve().parents[2]
MAIL = "mailtos://mailer:Hunter2-pw@smtp.kent-ny.example?to=jones@kent-ny.example"
GOOD = f"""
id = "notify-2"
dashboard = "https://command-post.example/"
state_file = "state/sent.json"
[retry]
first_delay_s = 2
max_delay_s = 30
give_up_after_s = 600
[[people]]
id = "insp-1"
channels = ["{MAIL}", "ntfys://ntfy.example/kent-insp-1"]
[[people]]
id = "command-post"
severities = ["breach", "data"]
channels = ["json://localhost:8080/hook"]
"""


def write(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "notify.toml"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_good_config_reads_with_its_people_channels_and_retries(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD), apprise_accepts)
    assert config.id == "notify-2"
    assert config.dashboard == "https://command-post.example/"
    assert config.state_file == tmp_path / "state" / "sent.json"
    assert config.retry == Retry(first_delay_s=2, max_delay_s=30, give_up_after_s=600)
    insp, post = config.people
    assert (insp.id, insp.severities) == ("insp-1", frozenset({"breach"}))  # the default
    assert [(c.number, c.scheme) for c in insp.channels] == [(1, "mailtos"), (2, "ntfys")]
    assert post.severities == frozenset({"breach", "data"})
    assert "Hunter2" not in repr(config)  # a channel's repr leaves its URL out
    assert "jones@" not in repr(config)


def test_the_example_config_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "notify.toml"
    shutil.copy(ROOT / "examples" / "notify.toml", path)
    path.chmod(0o600)
    config = load_config(path, apprise_accepts)
    assert [p.id for p in config.people] == ["insp-1", "insp-2", "command-post"]
    assert config.retry == Retry()


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_config_others_may_read_is_refused_saying_how_to_fix_it(
    tmp_path: Path, mode: int
) -> None:
    path = write(tmp_path, GOOD, mode)
    with pytest.raises(UsageError, match=f"may be read by others.*chmod 600 {path}"):
        load_config(path, apprise_accepts)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda t: t.replace('id = "insp-1"', 'id = "insp/1"'), r"people\[0\]\.id: must be"),
        (lambda t: t.replace("first_delay_s", "first_delay"), "retry: unknown key 'first_delay'"),
        (lambda t: t.replace("max_delay_s = 30", "max_delay_s = 1"), "at least first_delay_s"),
        (lambda t: t.replace("= 600", "= -1"), "give_up_after_s: must be a number of seconds"),
        (lambda t: t.replace('"data"]', '"urgent"]'), "'urgent' is not one of breach"),
        (lambda t: t.replace('id = "command-post"', 'id = "insp-1"'), "'insp-1' is named twice"),
        (lambda t: t.replace('state_file = "state/sent.json"\n', ""), "state_file: must name"),
        (lambda t: "colour = 1\n" + t, "config: unknown key 'colour'"),
        (lambda t: t.replace('channels = ["json', "channels = [] #"), "at least one apprise URL"),
    ],
)
def test_each_bad_key_is_named(tmp_path: Path, change: object, problem: str) -> None:
    text = change(GOOD)  # type: ignore[operator]
    with pytest.raises(UsageError, match=problem):
        load_config(write(tmp_path, text), apprise_accepts)


def test_a_url_apprise_cannot_use_is_named_by_person_and_number_never_quoted(
    tmp_path: Path,
) -> None:
    text = GOOD.replace("ntfys://ntfy.example/kent-insp-1", "nosuchthing://secret-token@x")
    with pytest.raises(UsageError) as caught:
        load_config(write(tmp_path, text), apprise_accepts)
    message = str(caught.value)
    assert "people[0] (insp-1) channel 2 (nosuchthing): apprise cannot send" in message
    assert "secret-token" not in message


def test_the_command_refuses_a_readable_config_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path, GOOD, 0o644)
    code = main(
        ["notify", "--permit", str(ROOT / "examples" / "permit.toml"), "--config", str(config)]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert "may be read by others" in err
    assert "Hunter2" not in err


def test_the_command_refuses_a_state_folder_it_cannot_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path, GOOD)
    (tmp_path / "state").write_text("a file where the folder should be")
    code = main(
        ["notify", "--permit", str(ROOT / "examples" / "permit.toml"), "--config", str(config)]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"folder {tmp_path / 'state'} cannot be made" in err


def test_retry_delays_double_and_are_capped() -> None:
    retry = Retry(first_delay_s=5, max_delay_s=60, give_up_after_s=600)
    assert [retry.delay(n) for n in range(1, 8)] == [5, 10, 20, 40, 60, 60, 60]
    assert retry.delay(10_000) == 60
