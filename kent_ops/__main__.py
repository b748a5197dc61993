"""``python -m kent_ops`` is the same as ``kent-ops``."""

from kent_ops.commands.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
