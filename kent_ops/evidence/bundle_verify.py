#!/usr/bin/env python3
"""verify.py: check a kent-ops evidence bundle with nothing but Python's standard library.

Run it in the folder the bundle was unzipped into (or give that folder):

    python3 verify.py [FOLDER] [--witness FILE …]

(``--witness``: a witness file obtained elsewhere, checked beside those in the bundle.)
It prints ``OK <records> <head hash>`` and exits 0 when everything holds, or one
``FAIL …`` line for each thing that does not (the first record of the evidence log
that does not match, a checkpoint the log contradicts, a file that differs from the
manifest) and exits 1. It checks:

1. the evidence log's hash chain, record by record, exactly as kent-ops computes it
   (the chain is described in README.txt and in kent-ops's docs/protocol.md);
2. that the log holds the record its head file names, with the same hash (records cut
   from its end, or lost in a crash, show here);
3. that the log holds every checkpoint kept in each witness file, with the same hash
   (a log rewritten, or cut back, after those checkpoints were received shows here);
4. that the log's record count and head hash are those the manifest gives;
5. that every file the manifest lists is present with the SHA-256 it gives.

Nothing here comes from kent-ops: this file is the whole program. It opens the log
read-only and changes nothing in the folder.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

BUNDLE_FORMAT = "kent-ops bundle 1"
WITNESS_FORMAT = "kent-ops witness 1"
GENESIS = "0" * 64
PREFIX = b"kent-ops evidence v1\n"
HASH = re.compile(r"[0-9a-f]{64}")
SELECT = (
    "SELECT id, kind, received_at, topic, payload, accepted, reason, hash FROM records ORDER BY id"
)


def field(value: bytes | None) -> bytes:
    """A field of the hashed record: absent, or present with its length."""
    if value is None:
        return b"\x00"
    return b"\x01" + len(value).to_bytes(8, "big") + value


def record_hash(prev: str, row: tuple[Any, ...]) -> str:
    """SHA-256 of the previous record's hash and every field of this record."""
    rid, kind, at, topic, payload, accepted, reason = row[:7]
    h = hashlib.sha256(PREFIX)
    h.update(prev.encode("ascii"))
    h.update(rid.to_bytes(8, "big"))
    h.update(field(kind.encode()))
    h.update(field(at.encode()))
    h.update(field(None if topic is None else topic.encode()))
    h.update(field(payload))
    h.update(field(None if accepted is None else (b"1" if accepted else b"0")))
    h.update(field(None if reason is None else reason.encode()))
    return h.hexdigest()


def opening_problem(kind: str, payload: bytes, meta: dict[str, str]) -> str | None:
    """Record 1 must open the log for the event the meta table names."""
    not_opening = "the first record is not the log's opening record"
    if kind != "system":
        return not_opening
    try:
        opened = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "the opening record is not JSON"
    if not isinstance(opened, dict) or opened.get("event") != "opened":
        return not_opening
    for key in ("event_id", "permit_sha256"):
        value = opened.get(key, "")
        if not isinstance(value, str):
            return not_opening
        if value != meta.get(key):
            return f"the meta table's {key} differs from the opening record's"
    return None


def row_problem(row: tuple[Any, ...], expected: int) -> str | None:
    """What is wrong with a stored row before its hash is computed, if anything."""
    rid, kind, at, topic, payload, accepted, reason = row[:7]
    if rid != expected:
        return "the record is missing"
    types_ok = (
        type(kind) is str
        and type(at) is str
        and type(payload) is bytes
        and (topic is None or type(topic) is str)
        and (reason is None or type(reason) is str)
        and accepted in (None, 0, 1)
    )
    return None if types_ok else "a field holds a value of the wrong type"


class Chain:
    """The outcome of walking a log: how far it verified, and the hashes asked for."""

    def __init__(self) -> None:
        self.count = 0
        self.head = GENESIS
        self.first_bad: int | None = None
        self.problem: str | None = None
        self.hashes: dict[int, str] = {}


def walk_chain(path: Path, want: tuple[int, ...] = ()) -> Chain:
    """Recompute the chain of the log at ``path``; stop at the first record that fails."""
    chain = Chain()
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        for row in db.execute(SELECT):
            expected = chain.count + 1
            problem = row_problem(row, expected)
            if problem is None:
                computed = record_hash(chain.head, row)
                if computed != row[7]:
                    shown = f"(computed {computed[:16]}…, stored {str(row[7])[:16]}…)"
                    problem = f"its content does not match its hash {shown}"
                elif row[0] == 1:
                    problem = opening_problem(row[1], row[4], meta)
            if problem is not None:
                chain.first_bad, chain.problem = expected, problem
                return chain
            chain.count, chain.head = row[0], row[7]
            if row[0] in want:
                chain.hashes[row[0]] = row[7]
    except sqlite3.DatabaseError as exc:
        chain.first_bad = chain.count + 1
        chain.problem = f"the file is damaged here ({exc})"
    finally:
        db.close()
    return chain


def event_of(path: Path) -> str:
    """The event the log's meta table names ("" if it cannot be read: the walk says why)."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'event_id'").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return ""
    return str(row[0]) if row else ""


def checkpoint_of(text: str) -> tuple[int, str] | None:
    """(record, hash) of a checkpoint's JSON text, or None if it is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    record, digest = data.get("record"), data.get("hash")
    if type(record) is not int or record < 1:
        return None
    if not isinstance(digest, str) or not HASH.fullmatch(digest):
        return None
    return record, digest


def witness_entries(data: bytes, event_id: str) -> tuple[list[tuple[int, int, str, str]], int]:
    """(line, record, hash, who and when) of every checkpoint of ``event_id`` in a witness
    file, and how many non-empty lines were not one."""
    entries, skipped = [], 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            skipped += 1
            continue
        ok = (
            isinstance(entry, dict)
            and entry.get("format") == WITNESS_FORMAT
            and entry.get("event") == event_id
            and all(isinstance(entry.get(k, ""), str) for k in ("received_at", "by", "host"))
            and isinstance(entry.get("payload"), str)
        )
        point = checkpoint_of(entry["payload"]) if ok else None
        if point is None:
            skipped += 1
            continue
        who = f"kept by {entry.get('by') or 'someone'} at {entry.get('received_at', '')}"
        entries.append((number, point[0], point[1], who))
    return entries, skipped


def contradiction(chain: Chain, record: int, digest: str, by: str) -> str | None:
    """The FAIL line for a claim the log contradicts, or None if it holds the claim."""
    if chain.count < record:
        cut = f"the log holds {chain.count} records but {by} names record {record}"
        return f"FAIL record {chain.count + 1}: {cut}"
    stored = chain.hashes.get(record)
    if stored != digest:
        differs = f"its hash in the log ({str(stored)[:16]}…) is not the one {by} names"
        return f"FAIL record {record}: {differs} ({digest[:16]}…)"
    return None


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def inside(folder: Path, name: object) -> Path | None:
    """The file ``name`` of the manifest, if it is a plain path inside the folder."""
    if not isinstance(name, str) or not name or name.startswith("/") or ".." in name.split("/"):
        return None
    return folder / name


class Check:
    """Everything one run finds: FAIL lines, warnings, and the chain."""

    def __init__(self, folder: Path, extra: list[Path] | None = None) -> None:
        self.folder = folder
        self.extra = extra or []
        """Witness files given on the command line, beside those in the bundle."""
        self.fails: list[str] = []
        self.warnings: list[str] = []
        self.chain: Chain | None = None

    def manifest(self) -> dict[str, Any] | None:
        path = self.folder / "manifest.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.fails.append("FAIL file manifest.json: it is missing")
            return None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self.fails.append(f"FAIL file manifest.json: it cannot be read ({exc})")
            return None
        if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
            self.fails.append(f"FAIL file manifest.json: it is not a {BUNDLE_FORMAT!r} manifest")
            return None
        return data

    def claims(self, manifest: dict[str, Any], event_id: str) -> list[tuple[int, str, str, str]]:
        """(record, hash, who says so, origin) of the head file and every witness line."""
        out: list[tuple[int, str, str, str]] = []
        evidence = manifest.get("evidence") or {}
        head = inside(self.folder, evidence.get("head_file"))
        if evidence.get("head_file") is None:
            self.warnings.append(
                "the bundle has no head file, so nothing shows whether records were cut "
                "from the log's end; check it against a checkpoint kept elsewhere"
            )
        elif head is not None and head.is_file():
            try:
                data = json.loads(head.read_text(encoding="utf-8"))
                record, digest = data["record"], data["hash"]
            except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
                record, digest = None, None
            if type(record) is int and isinstance(digest, str):
                out.append((record, digest, "its head file", head.name))
            else:
                self.fails.append(f"FAIL file {head.name}: it is not a head file")
        named = [(n, inside(self.folder, n)) for n in manifest.get("witnesses") or []]
        for name, path in named + [(str(p), p) for p in self.extra]:
            if path is None or not path.is_file():
                if path in self.extra:
                    self.fails.append(f"FAIL file {name}: the witness file given is missing")
                continue  # one in the bundle: the file check names it
            out += self.witness(name, path, event_id)
        return out

    def witness(self, name: str, path: Path, event_id: str) -> list[tuple[int, str, str, str]]:
        """The checkpoints of one witness file as claims, with a warning for unusable lines."""
        entries, skipped = witness_entries(path.read_bytes(), event_id)
        if skipped:
            self.warnings.append(
                f"witness {name}: {skipped} line(s) skipped, not checkpoints of event {event_id}"
            )
        elif not entries:
            self.warnings.append(f"witness {name} holds no checkpoint")
        return [
            (record, digest, f"witness {name} (line {line}, {who})", name)
            for line, record, digest, who in entries
        ]

    def log(self, manifest: dict[str, Any]) -> None:
        """The chain, then every claim against it, then the manifest's own figures."""
        evidence = manifest.get("evidence") or {}
        path = inside(self.folder, evidence.get("file"))
        if path is None or not path.is_file():
            self.fails.append(f"FAIL file {evidence.get('file')}: the evidence log is missing")
            return
        claims = self.claims(manifest, event_of(path))
        chain = self.chain = walk_chain(path, tuple(c[0] for c in claims))
        if chain.first_bad is not None:
            self.fails.append(f"FAIL record {chain.first_bad}: {chain.problem}")
            return
        told = set()
        for record, digest, by, origin in claims:
            line = None if origin in told else contradiction(chain, record, digest, by)
            if line is not None:
                told.add(origin)
                self.fails.append(line)
        records, head = evidence.get("records"), evidence.get("head_hash")
        if (records, head) != (chain.count, chain.head):
            first = chain.count
            if type(records) is int and records != chain.count:
                first = min(records, chain.count) + 1
            self.fails.append(
                f"FAIL record {first}: the manifest gives {records} records and head {head}, "
                f"the log holds {chain.count} records and head {chain.head}"
            )

    def files(self, manifest: dict[str, Any]) -> None:
        listed = manifest.get("files")
        if not isinstance(listed, dict):
            self.fails.append("FAIL file manifest.json: it lists no files")
            return
        for name, digest in sorted(listed.items()):
            path = inside(self.folder, name)
            if path is None:
                self.fails.append(f"FAIL file {name}: not a file inside the bundle")
            elif not path.is_file():
                self.fails.append(f"FAIL file {name}: listed in the manifest but missing")
            elif sha256(path) != digest:
                self.fails.append(
                    f"FAIL file {name}: its SHA-256 is not the one the manifest lists"
                )


def _arguments(argv: list[str]) -> tuple[Path, list[Path]]:
    """``[FOLDER] [--witness FILE …]``: the bundle's folder and witness files of one's own."""
    folder: Path | None = None
    extra: list[Path] = []
    words = iter(argv[1:])
    for word in words:
        if word == "--witness":
            extra.append(Path(next(words, "")))
        elif folder is None and not word.startswith("-"):
            folder = Path(word)
        else:
            sys.stderr.write(f"usage: python3 verify.py [FOLDER] [--witness FILE …] ({word}?)\n")
            raise SystemExit(2)
    return folder or Path(__file__).resolve().parent, extra


def main(argv: list[str]) -> int:
    folder, extra = _arguments(argv)
    check = Check(folder, extra)
    manifest = check.manifest()
    if manifest is not None:
        check.log(manifest)
        check.files(manifest)
    for warning in check.warnings:
        sys.stderr.write(f"verify.py: warning: {warning}\n")
    if check.fails:
        sys.stdout.write("".join(line + "\n" for line in check.fails))
        return 1
    assert check.chain is not None
    sys.stdout.write(f"OK {check.chain.count} {check.chain.head}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
