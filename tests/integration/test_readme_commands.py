"""The README's commands work as written in a fresh shell: no venv activated, no
kent-ops on the PATH, nothing but what a new terminal has."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

# Fresh shells run the launcher, which makes .venv when a checkout has none: not for the
# inner loop.
pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _sh_lines() -> list[str]:
    """Every command line of the README's ``sh`` blocks, continuations joined."""
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S):
        block = re.sub(r"\\\n\s*", " ", block)
        lines += [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    return lines


def fresh_shell(command: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "LANG": "C.UTF-8"}
    if "KENT_OPS_VENV" in os.environ:
        env["KENT_OPS_VENV"] = os.environ["KENT_OPS_VENV"]
    return subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


RUNNABLE = [
    line
    for line in _sh_lines()
    if line.startswith(("./scripts/kent-ops ", ".venv/bin/python -m sensors."))
]


@pytest.mark.timeout(300)
def test_the_readme_shows_commands_runnable_from_the_checkout() -> None:
    assert "./scripts/kent-ops permit check examples/permit.toml" in RUNNABLE


@pytest.mark.timeout(300)
@pytest.mark.parametrize("line", RUNNABLE)
def test_each_checkout_command_resolves_in_a_fresh_shell(line: str, tmp_path: Path) -> None:
    """Each is run as written when it is quick and local, else as its --help."""
    words = shlex.split(line)
    quick = "--broker" not in words and "--source-broker" not in words and "--permit" not in words
    command = line if quick else " ".join(words[: _verb_end(words)] + ["--help"])
    done = fresh_shell(command, tmp_path)
    assert done.returncode == 0, (command, done.stderr)
    assert "Traceback" not in done.stderr
    assert "command not found" not in done.stderr


def _verb_end(words: list[str]) -> int:
    """Where the command's own words end and its options begin."""
    for i, word in enumerate(words):
        if word.startswith("-") and word != "-m":
            return i
    return len(words)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "verb", sorted(set(re.findall(r"^\| `kent-ops ([a-z]+)", README, flags=re.M)))
)
def test_each_command_in_the_table_answers_help_in_a_fresh_shell(verb: str, tmp_path: Path) -> None:
    done = fresh_shell(f"./scripts/kent-ops {verb} --help", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "usage: kent-ops" in done.stdout


@pytest.mark.timeout(300)
def test_a_device_run_with_a_python_lacking_kent_ops_says_so_in_one_sentence(
    tmp_path: Path,
) -> None:
    done = fresh_shell("/usr/bin/python3 -m sensors.gate_counter --help", tmp_path)
    if done.returncode == 0:
        pytest.fail("the system Python has kent-ops's dependencies: nothing to show here")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert ".venv/bin/python -m sensors.gate_counter" in done.stderr
