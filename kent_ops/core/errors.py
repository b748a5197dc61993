"""The one exception type the command line turns into a sentence and an exit code."""

from __future__ import annotations

__all__ = ["CheckFailed", "KentOpsError", "UsageError"]


class KentOpsError(Exception):
    """An expected failure: its message is one sentence for the user, no traceback."""

    exit_code = 2


class UsageError(KentOpsError):
    """Bad input or usage: a missing file, an invalid permit, a broker URL we cannot parse."""

    exit_code = 2


class CheckFailed(KentOpsError):
    """A check ran and failed (a tampered evidence log, say): exit 1."""

    exit_code = 1
