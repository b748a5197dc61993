"""``kent-ops verify E``: recompute the evidence log's hash chain, one line of answer.

``OK <records> <head hash>`` (exit 0), or ``FAIL record N: <what is wrong>`` naming
the first record that does not match (exit 1); a file that is not an evidence log is
one sentence on stderr (exit 2, via the command line's error handling).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kent_ops.evidence.chain import verify

__all__ = ["cli_verify"]


def cli_verify(args: argparse.Namespace) -> int:
    """``kent-ops verify E``: ``OK <records> <head hash>`` (0) or the first bad record (1)."""
    result = verify(Path(args.evidence))
    sys.stdout.write(result.line() + "\n")
    return 0 if result.ok else 1
