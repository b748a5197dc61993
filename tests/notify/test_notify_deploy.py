"""The systemd unit: the broker from its EnvironmentFile, no secret on the command line."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from kent_ops.commands.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "kent-ops-notify.service"


def settings() -> dict[str, str]:
    text = UNIT.read_text().replace("\\\n", " ")
    lines = [ln for ln in text.splitlines() if "=" in ln and not ln.startswith("#")]
    return {k.strip(): v.strip() for k, v in (ln.split("=", 1) for ln in lines)}


def test_the_unit_runs_notify_with_no_broker_or_password_in_argv() -> None:
    unit = settings()
    argv = shlex.split(unit["ExecStart"])
    assert argv[0].endswith("/kent-ops")
    args = build_parser().parse_args(argv[1:])
    assert args.target == "kent_ops.commands.notify:cli_notify"
    assert args.broker is None  # from KENT_OPS_BROKER in the EnvironmentFile
    assert args.password_file is None
    assert not re.search(r"pass|://", unit["ExecStart"], re.IGNORECASE)
    assert unit["EnvironmentFile"] == "/etc/kent-ops/notify.env"


def test_the_examples_state_file_is_in_the_units_state_directory() -> None:
    unit = settings()
    example = tomllib.loads((ROOT / "examples" / "notify.toml").read_text())
    state = Path(example["state_file"])
    assert state.parent == Path("/var/lib") / unit["StateDirectory"]
    assert str(state.parent) in unit["ReadWritePaths"].split()
