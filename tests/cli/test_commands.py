"""The command table of ``hermes-pipeline``: running one command builds (and imports) only its parser, and the
table names exactly the commands the full parser has, so the lazy path cannot lose or misroute one."""

from __future__ import annotations

import argparse
import subprocess
import sys

from hermes_pipeline.cli.main import COMMANDS, build_parser


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def test_the_command_table_names_every_command_of_the_full_parser() -> None:
    assert _commands(build_parser()) == set(COMMANDS) | {"demo"}


def test_each_command_alone_builds_its_own_parser() -> None:
    for name in COMMANDS:
        assert name in _commands(build_parser(name)), name


def test_running_one_command_imports_no_other_command_module() -> None:
    code = ("import sys; from hermes_pipeline.cli.main import COMMANDS, build_parser; build_parser('hooks'); "
            "print(sorted(m for m in set(COMMANDS.values()) if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['hermes_pipeline.cli.hooks_cmd']"
