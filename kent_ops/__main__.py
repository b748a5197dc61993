"""``python -m kent_ops`` is the same as ``kent-ops``."""

import sys

try:
    from kent_ops.commands.cli import main
except ModuleNotFoundError as missing:  # a Python without kent-ops's dependencies
    sys.stderr.write(
        f"kent-ops: this Python ({sys.executable}) lacks {missing.name}: run it from the "
        "checkout as ./scripts/kent-ops, or with the Python kent-ops is installed in "
        "(.venv/bin/python -m kent_ops)\n"
    )
    raise SystemExit(2) from None

if __name__ == "__main__":
    raise SystemExit(main())
