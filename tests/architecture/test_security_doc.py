"""docs/security.md names, for each attack, the test that repeats it: every test it names
exists, so the page cannot point a reader at evidence that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_test_the_security_page_names_exists() -> None:
    doc = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?", doc)
    assert len(named) > 20
    last_file = None
    for path, test in named:
        file = ROOT / path
        assert file.is_file(), path
        last_file = file
        if test:
            assert re.search(rf"def {re.escape(test)}\b", file.read_text()), f"{path}::{test}"
    for test in re.findall(r"`…::(\w+)", doc):  # "…::name" continues the file named before
        assert last_file is not None
        assert any(
            re.search(rf"def {re.escape(test)}\b", f.read_text())
            for f in (ROOT / "tests").rglob("*.py")
        ), test
