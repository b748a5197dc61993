"""The core is pure: no MQTT, no SQLite, no Textual or Rich, and no clock.

Importing it in a fresh interpreter must not drag any of those in, and its source must
not read the time: every instant comes in through a call, which is what lets a replay
of the evidence log reproduce the live run exactly.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import kent_ops

CORE_DIR = Path(kent_ops.__file__).resolve().parent / "core"
CORE = tuple(
    sorted(
        ".".join(p.relative_to(CORE_DIR).with_suffix("").parts).removesuffix(".__init__")
        for p in CORE_DIR.rglob("*.py")
        if p.name != "__init__.py" or p.parent != CORE_DIR
    )
)
FORBIDDEN = ("paho", "sqlite3", "_sqlite3", "textual", "rich", "aiomqtt", "amqtt")
SHELLS = (
    "kent_ops.broker.client",
    "kent_ops.evidence.log",
    "kent_ops.service.aggregator",
    "kent_ops.broker.mosquitto",
)
CLOCK_CALLS = (
    "datetime.now(",
    "datetime.utcnow(",
    "date.today(",
    "time.time(",
    "time.monotonic(",
    "time.perf_counter(",
    "time.time_ns(",
)


def _source(name: str) -> Path:
    """The file of core module ``name`` (a package's ``__init__.py`` for a package)."""
    path = CORE_DIR.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def test_the_probe_lists_every_core_module_and_package() -> None:
    assert {"engine", "rules", "rules.duties", "wire", "wire.topics"} <= set(CORE)


def test_importing_the_core_pulls_in_no_io_or_ui_library() -> None:
    script = (
        "import json, sys\n"
        + "".join(f"import kent_ops.core.{name}\n" for name in CORE)
        + "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "kent_ops.core.engine" in loaded  # the probe really imported the core
    roots = {name.split(".")[0] for name in loaded}
    assert not roots & set(FORBIDDEN), sorted(roots & set(FORBIDDEN))
    assert not loaded & set(SHELLS), sorted(loaded & set(SHELLS))


def test_the_probe_would_see_a_forbidden_import() -> None:
    """The subprocess check is not vacuous: a shell module does load sqlite3."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, kent_ops.evidence.log; print('sqlite3' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize("name", CORE)
def test_the_core_never_reads_the_clock(name: str) -> None:
    path = _source(name)
    source = path.read_text(encoding="utf-8")
    for call in CLOCK_CALLS:
        assert call not in source, f"{path.name} calls {call}"
    tree = ast.parse(source, filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert "time" not in {a.name for a in node.names}, f"{path.name} imports time"
        if isinstance(node, ast.ImportFrom):
            assert node.module != "time", f"{path.name} imports from time"
        if isinstance(node, ast.Attribute) and node.attr in ("now", "utcnow", "today"):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("datetime", "date"):
                pytest.fail(f"{path.name} reads the clock: {base.id}.{node.attr}")
