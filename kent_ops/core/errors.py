"""The exceptions of the core: the one the command line turns into a sentence and an exit
code, and the one the engine turns into a rejected message with its reason."""

from __future__ import annotations

__all__ = ["CheckFailed", "KentOpsError", "Refused", "UsageError"]


class KentOpsError(Exception):
    """An expected failure: its message is one sentence for the user, no traceback."""

    exit_code = 2


class UsageError(KentOpsError):
    """Bad input or usage: a missing file, an invalid permit, a broker URL we cannot parse."""

    exit_code = 2


class CheckFailed(KentOpsError):
    """A check ran and failed (a tampered evidence log, say): exit 1."""

    exit_code = 1


class Refused(Exception):
    """A well-formed message the engine's state refuses (falling totals, an unknown alert,
    a backdated revocation): recorded as rejected, with this as its reason."""
