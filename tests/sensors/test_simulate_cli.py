"""``kent-ops simulate`` refuses bad input with one sentence and exit 2, before publishing."""

from __future__ import annotations

from pathlib import Path

import pytest

from kent_ops.broker.mosquitto import free_port
from kent_ops.commands.cli import main


def simulate(permit: Path, *args: str) -> list[str]:
    return ["simulate", "--permit", str(permit), *args]


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (["--scenario", "carnival"], "'carnival' is neither a built-in scenario"),
        (["--start", "tomorrow-ish"], "--start 'tomorrow-ish' is not an ISO 8601 time"),
        (["--broker", "http://example.org"], "must start with mqtt:// or mqtts://"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(
    example_permit_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], sentence: str
) -> None:
    assert main(simulate(example_permit_path, *args)) == 2
    err = capsys.readouterr().err
    assert sentence in err
    assert len(err.strip().splitlines()) == 1


def test_an_unreachable_broker_is_one_sentence(
    example_permit_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"mqtt://127.0.0.1:{free_port()}"
    assert main(simulate(example_permit_path, "--broker", url)) == 2
    assert capsys.readouterr().err.strip() == (
        f"kent-ops: cannot reach the broker at {url}: Connection refused"
    )


def test_an_invalid_permit_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "permit.toml"
    bad.write_text("[event]\nid = 'x'\n")
    assert main(simulate(bad)) == 2
    assert "is invalid" in capsys.readouterr().err
