"""The type checker guards the package: mypy finds nothing, and the core passes ``--strict``.

The configuration is ``[tool.mypy]`` in pyproject.toml: every function typed, unused or
code-less ``# type: ignore`` comments refused, and the pure core held to what ``--strict``
enables. The second test runs ``--strict`` itself on the core, so the core's override
cannot fall behind what a newer mypy calls strict. scripts/test runs mypy before the
suite, so here its cache (``.mypy_cache``, ignored by git) is usually warm.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".mypy_cache"
# A cold run takes seconds alone, a minute or more on a machine busy with other work.
MYPY_TIMEOUT_S = 600


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=MYPY_TIMEOUT_S,
        check=False,
    )


@pytest.mark.slow  # a whole-package mypy run, warm or cold
@pytest.mark.timeout(MYPY_TIMEOUT_S + 30)
def test_mypy_finds_no_error_in_the_package() -> None:
    result = _mypy("--cache-dir", str(CACHE))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")


@pytest.mark.slow
@pytest.mark.timeout(MYPY_TIMEOUT_S + 30)
def test_the_core_passes_mypy_strict() -> None:
    # A cache of its own: other options would invalidate the package run's cache.
    result = _mypy(
        "--strict",
        "--no-warn-unused-configs",  # the overrides for other layers' imports are unused here
        "--cache-dir",
        str(CACHE / "strict-core"),
        "kent_ops/core",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")
