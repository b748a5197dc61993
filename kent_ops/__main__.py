"""``python -m kent_ops`` is the same as ``kent-ops``."""

from kent_ops.cli import main

raise SystemExit(main())
