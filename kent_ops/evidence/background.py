"""Verify a whole evidence log in a second process, while the caller goes on working.

A restarted aggregator starts from the last engine snapshot and serves within seconds,
but the whole chain must still be recomputed (minutes for a festival's log). Hashing is
pure CPU, and Python runs one thread at a time, so it runs in a process of its own, on
the machine's other core: :class:`BackgroundVerify` starts
``python -m kent_ops.evidence.background LOG`` (this module), which walks the chain
with :func:`kent_ops.evidence.chain.verify` and prints its result as one JSON line;
the caller polls :meth:`BackgroundVerify.poll` (the aggregator) or waits for it
(:meth:`BackgroundVerify.wait`, the report, which replays meanwhile) and gets a
:class:`~kent_ops.evidence.chain.VerifyResult` once it is done (and ``seconds``, how
long the walk itself took, whenever the caller happened to look).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path

import msgspec

from kent_ops.evidence.chain import VerifyResult, verify
from kent_ops.evidence.records import EvidenceError

__all__ = ["BackgroundVerify", "main"]


class _Answer(msgspec.Struct):
    """The child's one line: the result, and how long the walk took."""

    result: VerifyResult
    seconds: float


class BackgroundVerify:
    """One verification of a log's whole chain, running in a child process.

    Args:
        path: the evidence log; records appended while it runs may be verified too.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.started = time.monotonic()
        self.seconds: float | None = None
        """How long the walk took (measured by the child), once it is done."""
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "kent_ops.evidence.background", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def poll(self) -> VerifyResult | None:
        """The result once the child is done, else None (never blocks)."""
        if self._proc.poll() is None:
            return None
        return self.wait()

    def wait(self) -> VerifyResult:
        """The result, waiting for the child as long as it takes."""
        out, err = self._proc.communicate()
        self.seconds = time.monotonic() - self.started
        try:
            answer = msgspec.json.decode(out.strip().splitlines()[-1], type=_Answer)
        except (IndexError, msgspec.DecodeError):
            why = err.decode(errors="replace").strip().splitlines()
            problem = why[-1] if why else f"exit code {self._proc.returncode}"
            return VerifyResult(False, 0, "", None, f"the verification gave no answer ({problem})")
        self.seconds = answer.seconds
        return answer.result

    def stop(self) -> None:
        """End the child if it still runs (a clean stop does not wait for it)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(5)
            if self._proc.poll() is None:
                self._proc.kill()
        with contextlib.suppress(ValueError, OSError):
            self._proc.communicate(timeout=5)


def main(argv: list[str]) -> int:
    """The child: verify the log named in ``argv`` and print the result as JSON."""
    started = time.monotonic()
    try:
        result = verify(Path(argv[0]))
    except EvidenceError as exc:
        result = VerifyResult(False, 0, "", None, str(exc))
    answer = _Answer(result, time.monotonic() - started)
    sys.stdout.buffer.write(msgspec.json.encode(answer) + b"\n")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
