"""``kent-ops`` called in the test's own process, through the entry point's ``main(argv)``.

A subprocess costs a fresh interpreter and the imports of the command (about half a
second each on a shared 2-core machine); the error paths only need what ``main`` writes
and returns. A few tests still launch the installed ``kent-ops`` to prove the entry point
and that no traceback ever reaches the user.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from kent_ops.commands.cli import main


@dataclass(frozen=True)
class Ran:
    """What one in-process ``kent-ops`` call returned and wrote, as a subprocess reports it."""

    returncode: int
    stdout: str
    stderr: str


def kent_ops(capsys: pytest.CaptureFixture[str], *argv: str) -> Ran:
    """Run ``kent-ops ARGV`` through ``main``; argparse's usage errors exit 2 as in a shell.

    The root logger is put back afterwards: a command that got as far as configuring its
    log lines would otherwise leave a handler on this test's captured stderr.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    capsys.readouterr()  # only what this call writes
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse: usage errors, --help, --version
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    out, err = capsys.readouterr()
    return Ran(code, out, err)
