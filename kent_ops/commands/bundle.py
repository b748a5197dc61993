"""``kent-ops bundle --permit P --evidence E --out F.zip [--witness FILE …]``: for counsel.

The Town attorney needs the evidence in one piece that can be checked without kent-ops.
The archive holds (docs/protocol.md, "A bundle for counsel"):

- ``evidence.sqlite``: a consistent copy of the log (SQLite's backup, so it may be
  taken while the aggregator writes), and ``evidence.sqlite.head``, its head file as it
  stood before the copy was taken (so the copy reaches it);
- ``permit.toml``; ``report/``: the report built from that very copy (the page, its
  CSVs and charts, its manifest, and ``report.pdf`` where Chromium is on PATH);
- ``witness/…``: each witness file given;
- ``verify.py`` (:mod:`kent_ops.evidence.bundle_verify`, needing Python's standard
  library only), ``README.txt`` in plain words, and ``manifest.json`` (written last:
  the SHA-256 of every other file, the log's records and head).

The copy is checked as ``kent-ops verify`` would: a chain that fails refuses the bundle
(exit 1, nothing written); a log behind its head file or contradicting a witness is
bundled all the same (counsel must see it) and said, exit 1. Exit 0: written, and the
log holds what its head file and every witness say.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kent_ops import __version__
from kent_ops.commands.bundle_readme import BundleFacts, readme_text
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.evidence import bundle_verify
from kent_ops.evidence.backup import backup_copy
from kent_ops.evidence.chain import verify
from kent_ops.evidence.claims import (
    Contradiction,
    contradictions,
    head_path,
    read_head_file,
    witness_claims,
)
from kent_ops.evidence.records import ChainBroken, read_meta
from kent_ops.report.build import build_report

__all__ = ["FORMAT", "cli_bundle"]

FORMAT = bundle_verify.BUNDLE_FORMAT
LOG = "evidence.sqlite"
PERMIT = "permit.toml"


def _check_inputs(args: argparse.Namespace) -> tuple[Permit, Path, Path, list[Path]]:
    """The permit, the log, the archive and the witnesses, each refused in one sentence."""
    out = Path(args.out)
    if out.exists():
        raise UsageError(f"{out} exists already; give another name, or move it away first")
    if not out.parent.is_dir():
        raise UsageError(f"cannot write {out}: folder {out.parent} does not exist")
    permit = load_permit(args.permit)
    evidence = Path(args.evidence)
    event = read_meta(evidence).get("event_id")
    if event != permit.event_id:
        raise UsageError(
            f"{evidence} is the evidence log of event {event!r}, but the permit {args.permit} "
            f"is for {permit.event_id!r}"
        )
    witnesses = [Path(w) for w in args.witness or ()]
    for w in witnesses:
        if not w.is_file():
            raise UsageError(f"witness file {w}: no such file")
    return permit, evidence, out, witnesses


def _witness_names(witnesses: list[Path]) -> list[str]:
    """Each witness's name in the archive: ``witness/<file name>``, numbered if two clash."""
    names: list[str] = []
    for number, path in enumerate(witnesses, start=1):
        name = f"witness/{path.name}"
        names.append(f"witness/{number}-{path.name}" if name in names else name)
    return names


def _stage(permit_path: Path, evidence: Path, witnesses: list[Path], folder: Path) -> list[str]:
    """The head file and the witnesses, then the log's copy (a log being written only grows
    after what they name was committed, so the copy reaches it), and the permit, into
    ``folder``; the witnesses' names there."""
    head = head_path(evidence)
    if head.is_file():
        head_path(folder / LOG).write_bytes(head.read_bytes())
    names = _witness_names(witnesses)
    (folder / "witness").mkdir()
    for path, name in zip(witnesses, names, strict=True):
        shutil.copyfile(path, folder / name)
    backup_copy(evidence, folder / LOG)
    shutil.copyfile(permit_path, folder / PERMIT)
    return names


def _check_copy(
    folder: Path, event_id: str, names: list[str], given: list[Path]
) -> list[Contradiction]:
    """The copy against its head file and the witnesses (each named as given), as
    ``kent-ops verify`` checks it."""
    log = folder / LOG
    head = read_head_file(log)
    claims = [head] if head is not None else []
    for name, original in zip(names, given, strict=True):
        read = witness_claims(folder / name, event_id, shown=str(original))
        if read.warning:
            sys.stderr.write(f"kent-ops: warning: {read.warning}\n")
        claims += read.claims
    result = verify(log, want={c.record for c in claims})
    return contradictions(result.count, result.hashes, claims)


def _manifest(folder: Path, permit: Permit, names: list[str], written_at: str) -> dict[str, Any]:
    """Every file's SHA-256, and the log's figures, as verify.py reads them."""
    result = verify(folder / LOG)
    files = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    )
    head = head_path(folder / LOG)
    return {
        "format": FORMAT,
        "program": "kent-ops",
        "version": __version__,
        "event": permit.event_id,
        "written_at": written_at,
        "evidence": {
            "file": LOG,
            "records": result.count,
            "head_hash": result.head_hash,
            "head_file": head.name if head.is_file() else None,
        },
        "permit": {"file": PERMIT},
        "report": "report/index.html",
        "witnesses": names,
        "files": {name: bundle_verify.sha256(folder / name) for name in files},  # as verify.py
    }


def _zip(folder: Path, out: Path) -> None:
    """Every file of ``folder`` into ``out``, written beside and renamed when complete."""
    partial = out.with_name(out.name + ".part")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.write(path, path.relative_to(folder).as_posix())
    partial.replace(out)


def _write(args: argparse.Namespace, folder: Path) -> tuple[dict[str, Any], list[Contradiction]]:
    """Stage every file of the bundle in ``folder`` and zip it to ``--out``."""
    permit, evidence, out, witnesses = _check_inputs(args)
    names = _stage(Path(args.permit), evidence, witnesses, folder)
    report = build_report(
        folder / PERMIT, folder / LOG, folder / "report", pdf=shutil.which("chromium") is not None
    )
    found = _check_copy(folder, permit.event_id, names, witnesses)
    written_at = datetime.now(UTC).isoformat(timespec="seconds")
    (folder / "verify.py").write_bytes(Path(bundle_verify.__file__).read_bytes())
    facts = BundleFacts(
        event_id=permit.event_id,
        event_name=permit.event_name,
        records=report.data.replay.records,
        head_hash=report.data.replay.head_hash,
        head_file=head_path(folder / LOG).is_file(),
        witnesses=tuple(names),
        report_files=tuple(sorted(p.name for p in (folder / "report").iterdir())),
        written_at=written_at,
        version=__version__,
    )
    (folder / "README.txt").write_text(readme_text(facts), encoding="utf-8")
    manifest = _manifest(folder, permit, names, written_at)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    _zip(folder, out)
    return manifest, found


def cli_bundle(args: argparse.Namespace) -> int:
    """Write the archive; 0 when the log holds all its head file and witnesses say, else 1."""
    with tempfile.TemporaryDirectory(prefix="kent-ops-bundle-") as staging:
        try:
            manifest, found = _write(args, Path(staging))
        except ChainBroken as exc:
            raise ChainBroken(
                f"refusing to bundle: {args.evidence} fails verification at record "
                f"{exc.record}: {exc.problem}; no bundle was written",
                exc.record,
            ) from None
    evidence = manifest["evidence"]
    if evidence["head_file"] is None:
        sys.stderr.write(
            f"kent-ops: warning: there is no head file beside {args.evidence}, so nothing in "
            "the bundle shows whether records were cut from the log's end\n"
        )
    for c in found:
        sys.stderr.write(f"kent-ops: warning: record {c.first_bad}: {c.problem}\n")
    sys.stdout.write(
        f"bundle written to {args.out}: {evidence['records']:,} records, head "
        f"{evidence['head_hash'][:16]}…, {len(manifest['witnesses'])} witness file(s), "
        f"{len(manifest['files'])} files in all; check it with: python3 verify.py\n"
    )
    return 1 if found else 0
