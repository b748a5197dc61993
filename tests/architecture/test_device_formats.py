"""Every device format is one module, registered once, documented and tested.

docs/architecture.md, "A new device format", is the recipe; a format module left out of
the registry, or registered without its line in docs/protocol.md or its fixture in
tests/core/test_devices.py, fails here.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from kent_ops.core.devices import formats
from kent_ops.core.devices.formats import FORMATS, READERS
from kent_ops.core.devices.reading import Format
from kent_ops.core.devices.source import SOURCE_KEYS

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
DEVICE_TESTS = (ROOT / "tests" / "core" / "test_devices.py").read_text(encoding="utf-8")
MODULES = sorted(m.name for m in pkgutil.iter_modules(formats.__path__))


@pytest.mark.parametrize("module", MODULES)
def test_each_format_module_declares_its_format_and_is_registered(module: str) -> None:
    declared = getattr(importlib.import_module(f"{formats.__name__}.{module}"), "FORMAT", None)
    assert isinstance(declared, Format), f"formats/{module}.py declares no FORMAT"
    assert FORMATS.get(declared.name) is declared, f"{declared.name} is not in FORMATS"
    assert READERS[declared.name] is declared.read


def test_the_registry_holds_only_the_modules_formats() -> None:
    assert len(FORMATS) == len(MODULES)


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_is_documented_and_tested(name: str) -> None:
    assert f"| `{name}` |" in PROTOCOL, f"docs/protocol.md's formats table has no `{name}`"
    assert f"`{name}`" in PROTOCOL.split("| `format` |")[1].split("\n")[0], (
        f"docs/protocol.md's source table does not list `{name}` as a format"
    )
    assert f'"{name}"' in DEVICE_TESTS, f"tests/core/test_devices.py never reads {name}"


def test_a_permit_names_a_format_by_the_registry() -> None:
    check = next(f.check for f in SOURCE_KEYS if f.key == "format")
    assert check is not None
    for name in FORMATS:
        assert check(name) is None
    assert "json" in (check("no-such-format") or "")
