"""Help is the first thing a user types: `pytest --help` with the plugin installed, and
`pytest-nl2sql --help` and every subcommand's `--help`, each option with a description."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql import cli
from pytest_nl2sql.plugin.options import _OPTIONS


def test_pytest_help_lists_every_nl2sql_option_with_a_description(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    text = proc.stdout
    assert "pytest-nl2sql: run NL2SQL suites" in text
    for name, _kwargs, _ini, help_text in _OPTIONS:
        # the option's line, then its description (argparse may wrap it onto the next line)
        match = re.search(rf"^  --nl2sql-{re.escape(name)}\b(.*)\n((?:\s{{10,}}.*\n)*)", text, re.M)
        assert match, f"--nl2sql-{name} is not listed in pytest --help"
        described = " ".join((match.group(1) + " " + match.group(2)).split())
        assert " ".join(help_text.split()[:3]) in described, f"--nl2sql-{name} has no description: {described!r}"
    assert "95% upper bound" in text  # the very text that used to crash argparse


def test_pytest_help_through_pytester(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--nl2sql-suite=PATH*", "*--nl2sql-max-leak-rate=X*"])


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))


COMMANDS = [path for path, _ in _walk(cli.build_parser())]


def test_the_walk_finds_every_subcommand() -> None:
    assert ("eval", "run") in COMMANDS and ("report", "compare") in COMMANDS and ("cache", "neighbours") in COMMANDS
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "pytest-nl2sql")
def test_every_command_help_exits_0_and_describes_every_option(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main([*path, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pytest-nl2sql")
    parser = dict(_walk(cli.build_parser()))[path]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = action.option_strings[-1] if action.option_strings else action.dest
        assert action.help and len(action.help) > 8, f"pytest-nl2sql {' '.join(path)}: {name} has no help text"
        assert " ".join(action.help.split()[:2]) in " ".join(out.split()), f"{name}'s help is not shown"


def test_the_command_help_through_the_module(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql", "eval", "run", "--help"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "--max-cost USD" in proc.stdout and "budget for the whole run" in proc.stdout
