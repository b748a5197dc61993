"""``report.pdf``: the page printed for the Board packet, by headless Chromium.

Chromium prints the very page the Board would open (its CSS, its embedded charts, its
print rules), so the PDF and ``index.html`` cannot drift apart, and nothing is added to
the Python dependencies. It is found on PATH as ``chromium`` (Debian's package); without
it ``--pdf`` is refused before the log is read.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from kent_ops.core.errors import KentOpsError, UsageError

__all__ = ["PRINT_TIMEOUT_S", "find_chromium", "print_pdf"]

PRINT_TIMEOUT_S = 180.0
"""A page with three charts prints in seconds; a wedged browser must not hang the clerk."""


def find_chromium() -> str:
    """The ``chromium`` on PATH.

    Raises:
        UsageError: there is none (``--pdf`` cannot be honoured; exit 2).
    """
    found = shutil.which("chromium")
    if found is None:
        raise UsageError(
            "--pdf prints the page with headless Chromium, and no 'chromium' is on PATH; "
            "install it (apt-get install chromium) or leave out --pdf"
        )
    return found


def print_pdf(chromium: str, page: Path, pdf: Path) -> None:
    """Print ``page`` (an HTML file) to ``pdf`` with headless Chromium, no header or footer.

    The browser runs with a fresh profile of its own in a temporary folder, so two
    reports printed at once do not share one, and the PDF is written beside ``pdf``
    and renamed only once it is complete.

    Raises:
        KentOpsError: Chromium failed, timed out or wrote no PDF.
    """
    partial = pdf.with_name(pdf.name + ".part")
    with tempfile.TemporaryDirectory(prefix="kent-ops-chromium-") as profile:
        command = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={partial}",
            page.resolve().as_uri(),
        ]
        try:
            done = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PRINT_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            partial.unlink(missing_ok=True)
            raise KentOpsError(
                f"Chromium did not print {page.name} to PDF within {PRINT_TIMEOUT_S:.0f} s"
            ) from None
    if done.returncode != 0 or not _is_pdf(partial):
        partial.unlink(missing_ok=True)
        raise KentOpsError(f"Chromium could not print {page.name} to PDF (exit {done.returncode})")
    partial.replace(pdf)


def _is_pdf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(5) == b"%PDF-"
    except OSError:
        return False
