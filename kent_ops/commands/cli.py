"""The ``kent-ops`` command line: one entry point, one sub-command per job.

Each command's work lives in its own module and is imported only when that command
runs, so ``kent-ops verify`` does not pay for Textual or pandas. Errors reach the user
as one sentence on stderr, never a traceback; exit codes are 0 ok, 1 findings or a
failed check, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from kent_ops import __version__
from kent_ops.commands.adapt_parsers import ADAPT_COMMANDS
from kent_ops.commands.field_parsers import FIELD_COMMANDS
from kent_ops.commands.parsers import COMMANDS, Sub
from kent_ops.core.errors import KentOpsError

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one sentence and exit 2, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"kent-ops: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kent-ops",
        description="Event-day operations monitor for the Town of Kent mass-gathering law.",
        epilog="Every command has --help with its options, defaults and an example.",
    )
    parser.add_argument("--version", action="version", version=f"kent-ops {__version__}")
    sub: Sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for add in (*COMMANDS, *FIELD_COMMANDS, *ADAPT_COMMANDS):
        add(sub)
    return parser


def _run(args: argparse.Namespace) -> int:
    """Import the command's module (``module:function``) and run it."""
    module_name, func_name = args.target.split(":")
    module = importlib.import_module(module_name)
    return int(getattr(module, func_name)(args) or 0)


def main(argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one command; turn every expected failure into one sentence and an exit code.

    ``parser``: one :func:`build_parser` made earlier (the apps' fork server builds it
    once for every app it forks: building it is several milliseconds of each app's start).
    """
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except KentOpsError as exc:
        sys.stderr.write(f"kent-ops: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("kent-ops: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
