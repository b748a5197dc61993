"""``kent-ops report --pdf``: the page printed for the Board packet, and the charts on it.

The PDF is printed by headless Chromium and read back with ``pdftotext`` (poppler-utils);
``scripts/test`` installs both from apt when they are missing.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from PIL import Image
from report_support import ROOT, ScriptedLog, write_permit
from test_report_scripted import T0, script_event

from kent_ops.report import charts
from kent_ops.report.build import build_report

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium")
PDFTOTEXT = shutil.which("pdftotext")


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("pdf")
    permit = write_permit(tmp)
    evidence = tmp / "evidence.sqlite"
    script_event(ScriptedLog(evidence, permit, T0))
    return permit, evidence


def report_cli(
    permit: Path, evidence: Path, out: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "report", "--permit", str(permit),
         "--evidence", str(evidence), "--out", str(out), *extra],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False, env=env,
    )  # fmt: skip


def test_the_pdf_holds_the_verdict_the_permit_number_and_every_finding(
    event: tuple[Path, Path], tmp_path: Path
) -> None:
    assert CHROMIUM, "install chromium (scripts/test does)"
    assert PDFTOTEXT, "install poppler-utils (scripts/test does)"
    permit, evidence = event
    out = tmp_path / "report"
    proc = report_cli(permit, evidence, out, "--pdf")
    assert proc.returncode == 1, proc.stderr  # the scripted breaches
    assert proc.stderr == ""
    assert f"{out}/report.pdf" in proc.stdout
    pdf = out / "report.pdf"
    assert pdf.read_bytes().startswith(b"%PDF-")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"]["report.pdf"] == hashlib.sha256(pdf.read_bytes()).hexdigest()
    assert sorted(p.name for p in out.iterdir()) == sorted([*manifest["files"], "manifest.json"])
    text = subprocess.run(
        [PDFTOTEXT, "-layout", str(pdf), "-"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "BREACHED" in text
    assert "MG-2027-003" in text
    with (out / "findings.csv").open(newline="", encoding="utf-8") as f:
        ids = [row["id"] for row in csv.DictReader(f)]
    assert len(ids) == 9
    for finding in ids:
        assert finding in text, finding
    assert "What the law provides" in text
    assert "The record is incomplete" in text


def test_every_printed_page_has_its_header_and_number_and_the_tables_fit(
    event: tuple[Path, Path], tmp_path: Path
) -> None:
    """A Board member reads it on paper: each page says whose report it is and which page."""
    assert CHROMIUM, "install chromium (scripts/test does)"
    assert PDFTOTEXT, "install poppler-utils (scripts/test does)"
    permit, evidence = event
    out = tmp_path / "report"
    proc = report_cli(permit, evidence, out, "--pdf")
    assert proc.returncode == 1, proc.stderr
    text = subprocess.run(
        [PDFTOTEXT, "-layout", str(out / "report.pdf"), "-"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    pages = [p for p in text.split("\f") if p.strip()]
    assert len(pages) > 5
    for number, page in enumerate(pages, start=1):
        lines = [line.strip() for line in page.strip().splitlines() if line.strip()]
        assert lines[0].startswith("Kent Summer Music Festival · permit MG-2027-003"), number
        assert lines[0].endswith("Post-event report · BREACHED"), number
        assert lines[-1] == f"Page {number} of {len(pages)}"
    # The verdict's box is whole on the first page, what was not watched with it.
    first = pages[0]
    assert "BREACHED" in first
    assert "Not watched:" in first
    assert "Sensors never heard: lot-b." in first
    # A figure observed reads on one line, not a word a line; a status is said once.
    assert "attendance 4,400" in text
    assert "spaces provided 1,050;" in text
    assert "OPEN open" not in text
    assert "NOT YET DUE not yet due" not in text


def test_pdf_without_chromium_is_one_sentence_and_exit_2(
    event: tuple[Path, Path], tmp_path: Path
) -> None:
    permit, evidence = event
    empty = tmp_path / "bin"
    empty.mkdir()
    out = tmp_path / "report"
    proc = report_cli(permit, evidence, out, "--pdf", env={"PATH": str(empty)})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "chromium" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not out.exists()  # refused before anything was read or written


def _share_of(image: Image.Image, colour: str, box: tuple[int, int, int, int]) -> float:
    """The share of pixels in ``box`` within a small distance of ``colour``."""
    target = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    pixels = np.asarray(image.convert("RGB").crop(box), dtype=np.int64)
    near = np.abs(pixels - target).sum(axis=2) < 40
    return float(near.mean())


def test_nurses_on_duty_and_required_are_distinct_colours_and_breaches_are_in_progress(
    event: tuple[Path, Path], tmp_path: Path
) -> None:
    permit, evidence = event
    outcome = build_report(permit, evidence, tmp_path / "report")
    image = Image.open(tmp_path / "report" / "staffing.png")
    width, height = image.size
    nurses_panel = (0, 0, width, height // 2)
    on_duty = _share_of(image, charts.NURSE_COLOUR, nurses_panel)
    required = _share_of(image, charts.REQUIRED_COLOUR, nurses_panel)
    assert on_duty > 0.002, on_duty
    assert required > 0.002, required
    nurse, need = (
        tuple(int(c[i : i + 2], 16) for i in (1, 3, 5))
        for c in (charts.NURSE_COLOUR, charts.REQUIRED_COLOUR)
    )
    assert sum(abs(a - b) for a, b in zip(nurse, need, strict=True)) > 200
    # The shaded bands are breaches in progress, not the gates' HOLD.
    fig, ax = plt.subplots()
    data = outcome.data
    span = (data.frame.index[0].to_pydatetime(), data.frame.index[-1].to_pydatetime())
    marks = charts._shade(ax, data.findings, charts.NURSE_RULES, data.log_end, span)
    plt.close(fig)
    assert sorted(m.get_label() for m in marks) == [
        "breach not proven (see the report)",
        "breach, proven",
    ]
