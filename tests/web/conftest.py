"""The web tests share the dashboards' sample status and command (tests/dashboards)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dashboards"))
