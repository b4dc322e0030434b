"""docs/plugin.md and docs/cli.md: every option documented, the conftest scorer example, the
documented failure report, regenerate during a run, and every subcommand of `nl2sql`."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from pytest_nl2sql.cli import build_parser
from pytest_nl2sql.plugin.options import _OPTIONS
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows

from .blocks import doc_text, named_block

STAR_SUITE = """\
version: 1
cases:
- id: star_001
  question: List every media type with all its columns.
  datasources: [chinook]
  status: approved
  origin: hand
  outcome: {admin: allowed}
  tables: [MediaType]
  sql: SELECT MediaTypeId, Name FROM MediaType
  plan: {datasource: chinook, from: MediaType, select: ["*"]}
- id: star_002
  question: How many media types are there?
  datasources: [chinook]
  status: approved
  origin: hand
  outcome: {admin: allowed}
  tables: [MediaType]
  sql: SELECT COUNT(*) AS n FROM MediaType
  plan:
    datasource: chinook
    from: MediaType
    select: [{expr: {count: "*"}, alias: n}]
"""


def test_every_option_and_its_ini_twin_is_documented() -> None:
    text = doc_text("plugin.md")
    missing = [f"--nl2sql-{name}" for name, *_ in _OPTIONS if f"`--nl2sql-{name}" not in text]
    missing += [
        f"nl2sql_{name.replace('-', '_')}"
        for name, _, ini, _ in _OPTIONS
        if ini is not None and f"`nl2sql_{name.replace('-', '_')}`" not in text
    ]
    assert not missing, f"docs/plugin.md does not describe: {', '.join(missing)}"


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "pytest-nl2sql") -> list[str]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                nested = _subcommands(sub, f"{prefix} {name}")
                out.extend(nested or [f"{prefix} {name}"])
    return out


def test_every_nl2sql_subcommand_has_a_section_in_cli_md() -> None:
    headings = re.findall(r"^## `([^`]*)`", doc_text("cli.md"), flags=re.M)
    commands = _subcommands(build_parser())
    assert len(commands) >= 9
    missing = [c for c in commands if not any(h == c or h.startswith(c + " ") for h in headings)]
    assert not missing, f"docs/cli.md has no section for: {', '.join(missing)}"


def test_the_conftest_scorer_judges_items_and_the_builtins_can_be_removed(
    pytester: pytest.Pytester, demo_project: Path
) -> None:
    (demo_project / "conftest.py").write_text(named_block("plugin.md", "conftest.py"))
    (demo_project / "evals" / "star.yaml").write_text(STAR_SUITE)
    # the star suite has no rows yet: --nl2sql-regenerate writes them, then the items run
    result = pytester.runpytest("--nl2sql-suite", "evals/star.yaml", "--nl2sql-regenerate", "--nl2sql-out", "star.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*evals/star.yaml: regenerated 2 cases (2 result sets), 0 already up to date, 0 failed",
        ]
    )
    result.stdout.fnmatch_lines(["*case 'star_001' as admin (plans mode)", "  FAILED no_select_star: the SQL selects *"])
    items = {i["case_id"]: i for i in json.loads((demo_project / "star.json").read_text())["items"]}
    assert items["star_001"]["failed_scores"] == ["no_select_star"]
    assert items["star_001"]["scores"]["result_match"]["passed"] is True  # the rows themselves are right
    assert items["star_002"]["scores"]["sql_length"] == {
        "passed": None, "value": len(items["star_002"]["sql"]), "detail": "", "gating": False,
    }

    result = pytester.runpytest("--nl2sql-suite", "evals/star.yaml", "-p", "no:nl2sql_scorers", "--nl2sql-out", "own.json")
    result.assert_outcomes(passed=1, failed=1)
    items = json.loads((demo_project / "own.json").read_text())["items"]
    assert {name for i in items for name in i["scores"]} == {"no_select_star", "sql_length"}


def _documented_failure() -> list[str]:
    text = doc_text("plugin.md")
    start = text.index("```\n_____________________________ chinook_001 [admin]")
    block = text[start + 4 : text.index("```", start + 4)]
    return block.splitlines()[1:]  # past the banner


def test_the_documented_failure_report_is_what_a_failing_item_shows(
    pytester: pytest.Pytester, demo_project: Path
) -> None:
    suite = demo_project / "evals" / "chinook.yaml"
    from pytest_nl2sql.suitefile.loader import load_suite

    rows = [dict(r) for r in load_suite(suite).get("chinook_001").rows]
    rows[0] = {"Country": "USA", "customer_count": 14}
    update_rows(suite, {"chinook_001": RowsUpdate(rows)})
    result = pytester.runpytest("--nl2sql-suite", "evals/chinook.yaml", "-k", "chinook_001 and admin")
    result.assert_outcomes(failed=1)
    expected = _documented_failure()
    assert expected[0] == "result_match: rows differ"  # the one-line reason, which -r shows
    assert expected[1].endswith("evals/chinook.yaml:35:3: case 'chinook_001' as admin (plans mode)")
    result.stdout.fnmatch_lines([expected[0], "*" + expected[1].split("/evals/", 1)[1], *expected[2:]])


def test_regenerate_refuses_xdist(pytester: pytest.Pytester, demo_project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-regenerate", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --nl2sql-regenerate rewrites suites once, in one process: run it without -n (or with -n 0)"]
    )
