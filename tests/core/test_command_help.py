"""A command of commands shows, in its own ``--help``, examples of how to start.

``clerk``, ``deploy`` and ``serve users`` each list their commands; a person who types
only the group's name and ``--help`` also gets examples, each of which the command line
takes as it is (a ``--help`` example aside).
"""

from __future__ import annotations

import shlex

import pytest
from cli_support import kent_ops

from kent_ops.commands.cli import build_parser

GROUPS = {
    "clerk": [
        "kent-ops clerk revoke --event kent-summer-fest-2027 --resolution TB-2027-41 "
        "--reason 'no doctor on site since 14:10'",
        "kent-ops clerk reinstate --event kent-summer-fest-2027 --resolution TB-2027-42 "
        "--reason 'a doctor on site again'",
        "kent-ops clerk revoke --help",
    ],
    "deploy": [
        "kent-ops deploy certs --out /etc/mosquitto/kent-ops --host broker.local",
        "kent-ops deploy acl --permit permit.toml --inspector insp-1 --clerk clerk-1 "
        "--out /etc/mosquitto/kent-ops/acl",
        "kent-ops deploy keys --permit permit.toml --out /etc/kent-ops/keys.toml",
        "kent-ops deploy bridge --help",
    ],
    "serve users": [
        "kent-ops serve users add insp-1 --role inspector",
        "kent-ops serve users add jsmith --role deputy --gate north --permit permit.toml",
        "kent-ops serve users list",
        "kent-ops serve users remove jsmith",
    ],
}


@pytest.mark.parametrize("group", list(GROUPS))
def test_a_group_of_commands_shows_examples_in_its_help(
    capsys: pytest.CaptureFixture[str], group: str
) -> None:
    done = kent_ops(capsys, *group.split(), "--help")
    assert done.returncode == 0
    shown = done.stdout.split("examples:\n", 1)[1].splitlines()
    assert [line.strip() for line in shown if line.strip()] == GROUPS[group]


@pytest.mark.parametrize("example", [e for es in GROUPS.values() for e in es if "--help" not in e])
def test_each_example_is_taken_by_the_command_line(example: str) -> None:
    args = build_parser().parse_args(shlex.split(example)[1:])
    assert args.target.startswith("kent_ops.commands.")
