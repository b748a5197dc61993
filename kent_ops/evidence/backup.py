"""A consistent copy of an evidence log, even while the aggregator writes it.

Copying the file's bytes while the aggregator commits can catch a page half-written,
or the main file without the records still in its ``-wal``. SQLite's online backup
copies the database as one read transaction sees it: every record committed when it
began, nothing after, in a file of its own. The copy is then set to a rollback journal
(``journal_mode=DELETE``), so it is one self-contained file that opens read-only
anywhere (a bundle for counsel, a CD) without a ``-wal`` or ``-shm`` beside it. Only
the file's header changes: the records, and so the chain, are those of the log.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kent_ops.evidence.records import EvidenceError, connect_ro

__all__ = ["backup_copy"]


def backup_copy(source: Path, dest: Path) -> None:
    """Copy the log at ``source`` to the new file ``dest``, consistently.

    Raises:
        EvidenceError: ``source`` is not an evidence log, or the copy failed.
    """
    if dest.exists():
        raise EvidenceError(f"{dest} exists already; the copy is made into a new file")
    src = connect_ro(source)
    try:
        dst = sqlite3.connect(dest)
        try:
            src.backup(dst)  # pages=-1: the whole database in one step, one read transaction
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
    except sqlite3.Error as exc:
        dest.unlink(missing_ok=True)
        raise EvidenceError(f"could not copy {source} ({exc})") from None
    finally:
        src.close()
