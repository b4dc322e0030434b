"""The suite format of clarifications (docs/suites.md): loader rules with path:line errors through
`pytest-nl2sql suite check`, regenerate writing each reading's rows in place (every other byte
kept), `suite plan` deriving their plans, and the drafts' writer round-tripping them."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.suitefile.loader import load_suite, parse_suite
from pytest_nl2sql.suitefile.yamltext import dump_suite

CLI = [sys.executable, "-m", "pytest_nl2sql"]

CASE = """\
version: 1
cases:
# a comment that stays
- id: sales
  question: Show me the sales.
  datasources: [chinook]
  status: approved
  outcome: {admin: clarify, viewer: clarify}   # both may ask
  sql: null
  clarifications:
  - about: per year      # the first reading
    when: [year, 're:\\bannual']
    reply: Per year, please.
    sql: |
      SELECT CAST(strftime('%Y', InvoiceDate) AS INTEGER) AS year, COUNT(*) AS invoices
      FROM Invoice GROUP BY year ORDER BY year
  - {about: total, when: total, reply: The total., sql: SELECT COUNT(*) AS invoices FROM Invoice, rows: []}
  default: total
  turns: 2
"""


def _check(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return subprocess.run([*CLI, "suite", "check", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=120)


def test_a_good_case_checks_and_loads(tmp_path: Path) -> None:
    run = _check(tmp_path, CASE)
    assert run.returncode == 0, run.stdout + run.stderr
    case = load_suite(tmp_path / "s.yaml", use_cache=False).cases[0]
    assert [c.about for c in case.clarifications] == ["per year", "total"]
    assert case.clarifications[0].when == ("year", "re:\\bannual") and case.default == "total" and case.turns == 2
    assert case.clarifications[0].matches("Annually or in total?") and case.clarifications[0].matches("Per YEAR?")
    assert not case.clarifications[0].matches("Which month?")


@pytest.mark.parametrize(
    ("change", "line", "said"),
    [
        (("    when: [year, 're:\\bannual']", "    when: 're:(annual'"), 12, "not a valid regular expression"),
        (("  default: total", "  default: totl"), 18, "default 'totl' is no reading's about: did you mean 'total'?"),
        (("  turns: 2", "  turns: 9"), 19, "turns must be a whole number from 1 to 5"),
        (("    reply: Per year, please.", "    replies: Per year, please."), 13, "unknown key 'replies': did you mean 'reply'?"),
        (("{admin: clarify, viewer: clarify}", "{admin: allowed}"), 11, "clarifications belongs to a case whose outcome is clarify"),
        (("about: total,", "about: per year,"), 17, "about 'per year' is already the reading at line 11"),
        (("  - about: per year      # the first reading\n    when", "  - about: per year      # the first reading\n    rows: [{x: 1}]\n    when"), 12, "missing 'sql'"),
    ],
)
def test_each_problem_is_named_at_its_line(tmp_path: Path, change: tuple[str, str], line: int, said: str) -> None:
    old, new = change
    assert old in CASE
    text = CASE.replace(old, new)
    if "missing 'sql'" in said:  # rows without sql
        text = text.replace("    sql: |\n      SELECT CAST(strftime('%Y', InvoiceDate) AS INTEGER) AS year, COUNT(*) AS invoices\n      FROM Invoice GROUP BY year ORDER BY year\n", "")
        said, line = "rows without sql", 12
    run = _check(tmp_path, text)
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert re.search(rf"s\.yaml:{line}:\d+: case 'sales': .*{re.escape(said)}", out), out


def test_regenerate_writes_each_readings_rows_in_place(tmp_path: Path, demo_dir: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(demo_dir, root)
    path = root / "evals" / "sales.yaml"
    path.write_text(CASE)
    run = subprocess.run([*CLI, "eval", "regenerate", "evals/sales.yaml"], cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    text = path.read_text()
    case = load_suite(path, use_cache=False).cases[0]
    assert [r["year"] for r in case.clarifications[0].rows] == [2007, 2008, 2009, 2010, 2011]
    assert case.clarifications[1].rows == ({"invoices": 412},)
    # every byte but the new rows is as it was: comments, the flow map's layout, the order
    without = re.sub(r"\n    rows:\n(    - .*\n)+", "\n", text).replace("rows: [{invoices: 412}]", "rows: []")
    assert without == CASE
    again = subprocess.run([*CLI, "eval", "regenerate", "evals/sales.yaml"], cwd=root, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and path.read_text() == text


def test_suite_plan_derives_the_readings_plans(tmp_path: Path, demo_dir: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(demo_dir, root)
    path = root / "evals" / "chinook.yaml"
    shipped = path.read_text()
    suite = parse_suite(shipped)
    stripped = shipped
    for case in suite.cases:
        for c in case.clarifications:
            assert c.plan, f"{case.id}: {c.about} ships without a plan"
    # drop the plans of chinook_062's readings, then derive them again
    block = shipped.split("- id: chinook_062", 1)[1].split("- id: chinook_063", 1)[0]
    bare = re.sub(r"\n    plan:\n(      .*\n)+", "\n", block)
    stripped = shipped.replace(block, bare)
    assert stripped != shipped
    path.write_text(stripped)
    run = subprocess.run([*CLI, "suite", "plan", "evals/chinook.yaml"], cwd=root, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "planned 3 cases" in run.stdout
    assert path.read_text() == shipped


def test_drafts_carry_clarifications(tmp_path: Path) -> None:
    suite = parse_suite(CASE)
    text = dump_suite(suite.cases)
    again = parse_suite(text)
    assert again.cases[0].clarifications == suite.cases[0].clarifications
    assert (again.cases[0].default, again.cases[0].turns) == ("total", 2)


def test_audit_checks_each_reading_at_its_line(tmp_path: Path, demo_dir: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(demo_dir, root)
    path = root / "evals" / "chinook.yaml"
    text = path.read_text()
    clean = subprocess.run([*CLI, "eval", "audit", "evals/chinook.yaml"], cwd=root, capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0 and "no findings" in clean.stdout, clean.stdout
    path.write_text(text.replace("    - {year: 2011, sales: 450.58}\n", "    - {year: 2011, sales: 450.59}\n", 1))
    line = next(n for n, x in enumerate(text.splitlines(), 1) if x == "  - about: per year")
    run = subprocess.run([*CLI, "eval", "audit", "evals/chinook.yaml"], cwd=root, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert f"evals/chinook.yaml:{line}: case 'chinook_062': [stale-rows] stored clarification 'per year' rows differ" in run.stdout
