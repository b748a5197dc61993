"""What others say the log held, and whether the log agrees: its head file, checkpoints, witnesses.

The hash chain proves no record was changed; it cannot prove none was cut off the end,
nor that the whole file was not rewritten with every hash recomputed. Claims made
outside the file can: the **head file** the aggregator writes beside the log
(``evidence.sqlite.head``: the last committed record and its hash), a **checkpoint**
someone kept (``--checkpoint N:HASH``: the broker's retained one, an inspector's note)
and the **witness files** of dashboards, gate views and the notifier
(:mod:`kent_ops.core.witness`). Each names a record and its hash; a log with fewer
records, or another hash at that record, is contradicted (:func:`contradictions`),
and ``kent-ops verify`` and the report say so in the words here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kent_ops.core.errors import UsageError
from kent_ops.core.witness import read_witness
from kent_ops.evidence.records import EvidenceError

__all__ = [
    "HEAD_SUFFIX",
    "Contradiction",
    "OutsideClaim",
    "WitnessClaims",
    "checkpoint_claim",
    "contradictions",
    "head_path",
    "read_head_file",
    "witness_claims",
]

HEAD_SUFFIX = ".head"
"""The head file is the log's own name with this added: ``evidence.sqlite.head``."""
HEAD_FILE = "its head file"
_CHECKPOINT = re.compile(r"([0-9]+):([0-9a-f]{64})")
SKIPPED_SHOWN = 3
"""Unusable witness lines named one by one in the warning; the rest are counted."""


@dataclass(frozen=True, slots=True)
class OutsideClaim:
    """A record number and hash that someone outside the log says it had.

    ``by`` names who says so, in words that follow "but" ("its head file", "witness
    w.jsonl (line 4, kept by inspector-alice at …)"); ``origin`` is the file or argument
    it came from: a log contradicted by many lines of one witness is told once.
    """

    record: int
    hash: str
    by: str
    origin: str


@dataclass(frozen=True, slots=True)
class Contradiction:
    """The log disagrees with a claim: it ends before the record, or holds another there."""

    claim: OutsideClaim
    first_bad: int
    """The first record the log lacks (a cut), or the record whose hash differs."""
    problem: str
    """What is wrong, in words that follow ``FAIL record N:``."""

    @property
    def sentence(self) -> str:
        """The problem as a sentence of its own (the report's words)."""
        if self.problem.startswith("its hash"):
            return f"record {self.first_bad}'s hash" + self.problem[len("its hash") :]
        return self.problem


def head_path(evidence: Path) -> Path:
    """The head file beside ``evidence``."""
    return evidence.with_name(evidence.name + HEAD_SUFFIX)


def read_head_file(evidence: Path) -> OutsideClaim | None:
    """What the head file beside ``evidence`` names; None if there is none.

    Raises:
        EvidenceError: it exists but cannot be read, or is not a head file.
    """
    path = head_path(evidence)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError(f"head file {path} cannot be read ({exc})") from None
    try:
        data = json.loads(text)
        record, digest = data["record"], data["hash"]
    except (ValueError, KeyError, TypeError):
        data, record, digest = None, None, None
    if type(record) is not int or not isinstance(digest, str):
        raise EvidenceError(
            f"head file {path} is damaged: it does not name a record and its hash"
        ) from None
    return OutsideClaim(record, digest, HEAD_FILE, str(path))


def checkpoint_claim(text: str) -> OutsideClaim:
    """``--checkpoint N:HASH`` as a claim.

    Raises:
        UsageError: it is not a record number, a colon and 64 lower-case hex digits.
    """
    found = _CHECKPOINT.fullmatch(text.strip())
    if found is None or int(found[1]) < 1:
        raise UsageError(
            f"--checkpoint {text!r} is not RECORD:HASH, a record number and the 64 hex "
            "digits of its hash as a checkpoint gives them (e.g. 225:9f2c…)"
        )
    record, digest = int(found[1]), found[2]
    return OutsideClaim(record, digest, "the checkpoint given", text)


@dataclass(frozen=True, slots=True)
class WitnessClaims:
    """A witness file's checkpoints as claims, and a warning for the lines it could not use."""

    claims: list[OutsideClaim]
    warning: str | None


def witness_claims(path: Path, event_id: str, shown: str | None = None) -> WitnessClaims:
    """Every checkpoint of ``event_id`` a witness file holds, as claims; ``shown``: the
    file's name in what is said (default ``path``; a copy is named as its original).

    Raises:
        EvidenceError: the file is missing or cannot be read.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise EvidenceError(f"witness file {path}: no such file") from None
    except OSError as exc:
        raise EvidenceError(f"witness file {path} cannot be read ({exc.strerror})") from None
    read = read_witness(data, event_id)
    name = shown if shown is not None else str(path)
    claims = [
        OutsideClaim(
            e.record,
            e.hash,
            f"witness {name} (line {e.line}, kept by {e.by or 'someone'} at {e.received_at})",
            name,
        )
        for e in read.entries
    ]
    warning = None
    if read.skipped:
        shown = "; ".join(f"line {n}: {why}" for n, why in read.skipped[:SKIPPED_SHOWN])
        more = len(read.skipped) - SKIPPED_SHOWN
        warning = (
            f"witness file {name}: {len(read.skipped)} line(s) skipped, not checkpoints of "
            f"event {event_id} ({shown}{f'; and {more} more' if more > 0 else ''})"
        )
    elif not claims:
        warning = f"witness file {name} holds no checkpoint"
    return WitnessClaims(claims, warning)


def _contradiction(
    count: int, hashes: Mapping[int, str], claim: OutsideClaim
) -> Contradiction | None:
    if claim.record < 1:  # names no record (a log that had none): nothing to contradict
        return None
    if count < claim.record:
        problem = f"the log holds {count} records but {claim.by} names record {claim.record}"
        return Contradiction(claim, count + 1, problem)
    stored = hashes.get(claim.record)
    if stored != claim.hash:
        problem = (
            f"its hash in the log ({str(stored)[:16]}…) is not the one {claim.by} names "
            f"({claim.hash[:16]}…)"
        )
        return Contradiction(claim, claim.record, problem)
    return None


def contradictions(
    count: int, hashes: Mapping[int, str], claims: Iterable[OutsideClaim]
) -> list[Contradiction]:
    """Where a log of ``count`` records (``hashes``: the stored hash of each claimed
    record it holds) disagrees with the claims: the first contradiction of each origin,
    in the order the origins were given."""
    found: dict[str, Contradiction] = {}
    for claim in claims:
        if claim.origin in found:
            continue
        problem = _contradiction(count, hashes, claim)
        if problem is not None:
            found[claim.origin] = problem
    return list(found.values())
