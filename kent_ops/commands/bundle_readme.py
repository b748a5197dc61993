"""The README.txt of a bundle for counsel: what each file is and how to check it, in plain words."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

__all__ = ["BundleFacts", "readme_text"]

REPORT_FILES = {
    "index.html": "the compliance report for the Town Board: open it in any web browser",
    "report.pdf": "the same page as a PDF",
    "findings.csv": "a row per finding (for a spreadsheet)",
    "timeline.csv": "a row per minute: attendance, staffing, parking",
    "attendance.png": "the attendance chart",
    "staffing.png": "the staffing chart",
    "parking.png": "the parking chart",
    "manifest.json": "the report's own list of its files' SHA-256",
}


@dataclass(frozen=True, slots=True)
class BundleFacts:
    """What the README states about one bundle."""

    event_id: str
    event_name: str
    records: int
    head_hash: str
    head_file: bool
    witnesses: tuple[str, ...]
    report_files: tuple[str, ...]
    written_at: str
    version: str


def _files(facts: BundleFacts) -> str:
    rows = [
        ("README.txt", "this page"),
        ("verify.py", "a check of everything below that needs only Python 3 (see CHECKING)"),
        ("manifest.json", "the SHA-256 of every other file, and the log's record count and head"),
        (
            "evidence.sqlite",
            "the evidence log: every message the monitor received, every alert it raised "
            "and what inspectors recorded, in order, each record sealed to the one before "
            "(an SQLite database; any SQLite tool opens it)",
        ),
        (
            "evidence.sqlite.head",
            "the last record the monitor had saved, and its seal, written beside the log as "
            "it ran: a log with records cut from its end no longer reaches it",
        )
        if facts.head_file
        else ("(no head file)", "the log had none beside it when this bundle was made"),
        ("permit.toml", "the permit the event was monitored under"),
        *(
            (f"report/{name}", REPORT_FILES.get(name, "part of the compliance report"))
            for name in facts.report_files
        ),
        *(
            (
                name,
                "a witness file: the seals of the log as one dashboard, gate view or "
                "notifier received them during the event, one a line",
            )  # fmt: skip
            for name in facts.witnesses
        ),
    ]
    return "\n".join(
        f"  {name}\n" + textwrap.fill(what, 84, initial_indent=" " * 6, subsequent_indent=" " * 6)
        for name, what in rows
    )


def readme_text(facts: BundleFacts) -> str:
    """The whole README.txt."""
    return f"""EVIDENCE BUNDLE: {facts.event_name} ({facts.event_id})
Written {facts.written_at} by kent-ops {facts.version}.

The evidence log holds {facts.records:,} records. Its last record's seal (its "head") is
{facts.head_hash}

FILES

{_files(facts)}

CHECKING

In a terminal, in the folder this bundle was unzipped into, run:

    python3 verify.py

Nothing else is needed: not kent-ops, not an internet connection. verify.py is short and
reads top to bottom; have anyone you trust read it first. It prints

    OK {facts.records} {facts.head_hash}

when everything holds, or one line starting with FAIL for each thing that does not,
naming the record of the log, or the file, that is wrong.

It checks five things:

1. The seals. Every record carries the SHA-256 of its own content and of the record
   before it, so changing, adding or removing any record breaks every seal from there
   on. verify.py recomputes all of them.
2. The end. The head file names the last record the monitor saved, and its seal. A log
   that ends before it, or holds another record there, lost records from its end.
3. The witnesses. During the event the monitor published its latest seal every minute,
   and each inspector's dashboard, gate view and the notifier kept what they received
   on their own machines. A log rewritten or cut back afterwards cannot match the seals
   they kept. To check a witness file you obtained yourself (from an inspector, not
   from whoever gave you this bundle), add it:

       python3 verify.py --witness their-file.jsonl

4. The manifest's figures: the log's record count and head are those it gives.
5. The files: each file listed in manifest.json has the SHA-256 given there.

WHAT THE CHECK DOES AND DOES NOT PROVE

The seals prove that no record was changed after the record that follows it was
written. They do not prove who wrote the log: someone able to rewrite the whole file
could recompute every seal, and write a new manifest. What such a person cannot change
is a seal kept elsewhere: a witness file on an inspector's laptop or phone page, or a
checkpoint someone noted down. The more of those you compare, the stronger the check.
The head above can also be compared with any checkpoint published during the event:
a checkpoint names a record number and its seal, and this log must hold that record
with that seal.

The report in report/ was made from this very log by the same program that watched
the event; report/index.html opens in any web browser.
"""
