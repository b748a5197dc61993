"""``kent-ops verify E [--checkpoint N:HASH …] [--witness FILE …]``: is the log whole?

It recomputes the hash chain, then checks the log against what others say it held:
the head file beside it (``E.head``), every ``--checkpoint`` and every checkpoint of
every ``--witness`` file (:mod:`kent_ops.evidence.claims`). It prints
``OK <records> <head hash>`` (exit 0), or a ``FAIL record N: <what is wrong>`` line for
the first record that does not match, or for each claim the log contradicts (its end
cut off, or another hash at the record named) (exit 1). A log with no head file beside
it is a warning, not a failure: a copy handed over alone is not evidence of a cut, but
nothing then shows its end was not. A whole log that records messages lost before it
(a sensor's gap, the broker's restart) says so on stderr beside its ``OK``. A missing or
non-evidence file, a damaged head file, a bad ``--checkpoint`` or a missing witness file
is one sentence on stderr (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kent_ops.evidence.chain import verify
from kent_ops.evidence.claims import (
    OutsideClaim,
    checkpoint_claim,
    contradictions,
    head_path,
    read_head_file,
    witness_claims,
)
from kent_ops.evidence.losses import recorded_losses
from kent_ops.evidence.records import read_meta

__all__ = ["cli_verify", "no_head_warning"]


def no_head_warning(evidence: Path) -> str:
    """What a log with no head file beside it does not show."""
    return (
        f"there is no head file beside {evidence} ({head_path(evidence).name}), so nothing "
        "here shows whether records were cut from the log's end; check it against a "
        "checkpoint kept elsewhere (--checkpoint, --witness)"
    )


def _claims(args: argparse.Namespace, evidence: Path) -> tuple[list[OutsideClaim], list[str]]:
    """Every claim to check, and the warnings reading them gave; the head file is read
    first, before the chain: a log being written only grows after it."""
    given = [checkpoint_claim(text) for text in args.checkpoint or ()]
    event_id = read_meta(evidence).get("event_id", "")
    witnessed = [witness_claims(Path(w), event_id) for w in args.witness or ()]
    head = read_head_file(evidence)
    warnings = [] if head is not None else [no_head_warning(evidence)]
    warnings += [w.warning for w in witnessed if w.warning]
    claims = ([head] if head is not None else []) + given
    return claims + [c for w in witnessed for c in w.claims], warnings


def cli_verify(args: argparse.Namespace) -> int:
    """``OK <records> <head hash>`` (0), or the first bad record and each claim the log
    contradicts (1)."""
    evidence = Path(args.evidence)
    claims, warnings = _claims(args, evidence)
    result = verify(evidence, want={c.record for c in claims})
    for warning in warnings:
        sys.stderr.write(f"kent-ops: warning: {warning}\n")
    if not result.ok:  # a broken chain: what it holds past the break proves nothing
        sys.stdout.write(result.line() + "\n")
        return 1
    found = contradictions(result.count, result.hashes, claims)
    if found:
        sys.stdout.write("".join(f"FAIL record {c.first_bad}: {c.problem}\n" for c in found))
        return 1
    _say_losses(evidence)
    sys.stdout.write(result.line() + "\n")
    return 0


LOSSES_SHOWN = 20
"""At most this many losses are named on stderr; the report lists every one."""


def _say_losses(evidence: Path) -> None:
    """A whole log may still record that messages never reached it: say so on stderr."""
    losses = recorded_losses(evidence)
    if not losses:
        return
    sys.stderr.write(
        f"kent-ops: the log is whole, but it records {len(losses)} loss"
        f"{'es' if len(losses) != 1 else ''} before it (the report lists every one):\n"
    )
    for loss in losses[:LOSSES_SHOWN]:
        sys.stderr.write(f"kent-ops:   {loss}\n")
    if len(losses) > LOSSES_SHOWN:
        sys.stderr.write(f"kent-ops:   and {len(losses) - LOSSES_SHOWN} more\n")
