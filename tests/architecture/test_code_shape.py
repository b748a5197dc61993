"""The code stays livable: short functions, modules of one concept.

No function in the product longer than 80 lines and no module longer than 500: past
that a newcomer cannot hold it in mind, and it is usually two things in one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("kent_ops", "sensors", "dashboards")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500

SOURCES = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_the_product_has_sources_to_check() -> None:
    assert len(SOURCES) > 50


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_500_lines_and_no_function_over_80(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.name} has {lines} lines"
    long = [
        f"{f.name} ({f.end_lineno - f.lineno + 1} lines)"
        for f in _functions(ast.parse(text))
        if f.end_lineno is not None and f.end_lineno - f.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{path.name}: {', '.join(long)}"
