"""0.6 gold files: reading them, migrating them to version 1, and the gold digest.

The fixture pair in ``legacy/`` is a small 0.6 gold set (``gold.yaml``, with comments) and its
plans (``gold_plans.yaml``). Migration renames keys and moves plans onto their cases; nothing
else changes, which the gold digest proves: it is the same whether the cases were read from the
0.6 files by the legacy loader or from the migrated suite.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.suitefile.digest import gold_digest
from pytest_nl2sql.suitefile.legacy import (
    RENAMES,
    load_legacy,
    load_legacy_plans,
    migrate,
    migrate_text,
)
from pytest_nl2sql.suitefile.loader import load_suite, parse_suite
from pytest_nl2sql.suitefile.model import Outcome, Status
from tests.suite.corpus import LEGACY

GOLD = LEGACY / "gold.yaml"
PLANS = LEGACY / "gold_plans.yaml"

#: gold_digest of the fixture pair, taken with the legacy loader when the fixture was written.
GOLD_DIGEST = "d45387530605441fff4c2df7ef0a9e5b66665e3c575f87258976f899a7a591ef"
#: ... and of gold.yaml alone (no plans).
GOLD_DIGEST_WITHOUT_PLANS = "f609e7d10ca2d284cfd573571cc51d22b091b2cbb21e04ba91d5a5a9ebf9185f"


def _nl2sql(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_nl2sql.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "NL2SQL_CACHE_DIR": "off"},
    )


def _legacy_digest(tmp_path: Path, text: str | None = None, plans: str | None = None) -> str:
    """The digest of a (possibly edited) copy of the fixture pair, read by the legacy loader."""
    gold, plans_path = tmp_path / "edited.yaml", tmp_path / "edited_plans.yaml"
    gold.write_text(
        text if text is not None else GOLD.read_text(encoding="utf-8"), encoding="utf-8"
    )
    plans_path.write_text(
        plans if plans is not None else PLANS.read_text(encoding="utf-8"), encoding="utf-8"
    )
    return gold_digest(load_legacy(gold, plans_path))


def _comments(text: str) -> list[str]:
    return [m.group(0) for m in re.finditer(r"#.*", text)]


def test_the_legacy_loader_reads_0_6_files_with_their_plans() -> None:
    suite = load_legacy(GOLD, PLANS)
    assert [c.id for c in suite] == ["chinook_001", "chinook_002", "chinook_003", "chinook_004"]
    first = suite.get("chinook_001")
    assert first.datasources == ("chinook",)
    assert first.outcome == {
        "admin": Outcome.ALLOWED,
        "analyst": Outcome.ALLOWED,
        "viewer": Outcome.REFUSED,
    }
    assert first.tables == ("Customer",)
    assert first.columns == ("Customer.Country", "Customer.CustomerId")
    assert first.sql.startswith(
        "SELECT Country, COUNT(CustomerId) AS customer_count\nFROM Customer\n"
    )
    assert first.rows[0] == {"Country": "USA", "customer_count": 13}
    assert len(first.alt_sql) == len(first.alt_rows) == 1
    assert first.plan["group_by"] == ["Country"]
    assert suite.get("chinook_002").order_matters is True
    assert suite.get("chinook_003").sql is None and suite.get("chinook_003").plan == {
        "kind": "not_answerable",
        "reason": "no colour data",
    }
    assert (
        suite.get("chinook_004").datasources == ("chinook",)
        and suite.get("chinook_004").plan is None
    )
    assert suite.get("chinook_004").status is Status.DRAFT
    assert load_legacy(GOLD).get("chinook_001").plan is None


def test_migrate_command_writes_a_version_1_suite_keeping_comments(tmp_path: Path) -> None:
    result = _nl2sql(
        "suite", "migrate", str(GOLD), "--plans", str(PLANS), "-o", "new.yaml", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "new.yaml: wrote 4 cases (version 1)\n"
    new = tmp_path / "new.yaml"
    old_text, new_text = GOLD.read_text(encoding="utf-8"), new.read_text(encoding="utf-8")

    suite = load_suite(new)
    assert len(suite) == 4 and suite.version == 1
    assert new_text.splitlines()[3] == "version: 1"  # after the leading comment lines
    keys = set(re.findall(r"^\s*-?\s*([a-z_]+):", new_text, re.M))
    assert keys.isdisjoint(RENAMES), keys & set(RENAMES)
    assert {
        "datasources",
        "outcome",
        "tables",
        "columns",
        "sql",
        "rows",
        "alt_sql",
        "alt_rows",
        "plan",
    } <= keys
    assert _comments(new_text) == _comments(old_text)
    # nothing changed but key names, datasource names made lists, 'version: 1' and the plans
    expected = old_text.replace("\ncases:\n", "\nversion: 1\ncases:\n", 1)
    for old_key, new_key in RENAMES.items():
        expected = re.sub(rf"^(\s*-?\s*){old_key}:", rf"\g<1>{new_key}:", expected, flags=re.M)
    expected = re.sub(r"^(  datasources:) (\w+)", r"\1 [\2]", expected, flags=re.M)
    assert re.sub(r"\n  plan:\n(    .*\n)+", "\n", new_text) == expected


def test_migrated_and_legacy_cases_have_the_same_gold_digest(tmp_path: Path) -> None:
    legacy = load_legacy(GOLD, PLANS)
    migrated = migrate(GOLD, tmp_path / "new.yaml", PLANS)
    reloaded = load_suite(tmp_path / "new.yaml", use_cache=False)
    assert gold_digest(legacy) == gold_digest(migrated) == gold_digest(reloaded) == GOLD_DIGEST
    assert reloaded.cases == legacy.cases
    assert gold_digest(load_legacy(GOLD)) == GOLD_DIGEST_WITHOUT_PLANS


EDITS = {
    "question": ("Which artist has the most albums?", "Which artist has the most albums ?"),
    "sql": ("ORDER BY albums DESC LIMIT 1", "ORDER BY albums DESC LIMIT 2"),
    "a row value": ("{Name: Iron Maiden, albums: 21}", "{Name: Iron Maiden, albums: 22}"),
    "a row value's type": ("{Name: Iron Maiden, albums: 21}", "{Name: Iron Maiden, albums: 21.0}"),
    "a column name": ("{Name: Iron Maiden, albums: 21}", "{Artist: Iron Maiden, albums: 21}"),
    "row order": (
        "  - {Country: Canada, customer_count: 8}\n  - {Country: Brazil, customer_count: 5}\n  alt_gold_sql",
        "  - {Country: Brazil, customer_count: 5}\n  - {Country: Canada, customer_count: 8}\n  alt_gold_sql",
    ),
    "an alternative's rows": (
        "  - - {Country: USA, customer_count: 13}",
        "  - - {Country: USA, customer_count: 14}",
    ),
    "an alternative's sql": ("ORDER BY 2 DESC, 1", "ORDER BY 2 DESC"),
    "an outcome": ("viewer: refused}", "viewer: clarify}"),
    "a role": ("{admin: allowed, analyst: allowed}", "{admin: allowed, auditor: allowed}"),
    "tables": ("needed_tables: [Album, Artist]", "needed_tables: [Album]"),
    "columns": ("needed_columns: [Artist.Name, Album.AlbumId]", "needed_columns: [Artist.Name]"),
    "an id": ("- id: chinook_004", "- id: chinook_005"),
}


@pytest.mark.parametrize("what", EDITS)
def test_any_gold_edit_changes_the_digest(tmp_path: Path, what: str) -> None:
    old, new = EDITS[what]
    text = GOLD.read_text(encoding="utf-8")
    assert text.count(old) == 1, what
    assert _legacy_digest(tmp_path, text.replace(old, new)) != GOLD_DIGEST


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("  limit: 1\n", "  limit: 2\n"),
        ("reason: no colour data", "reason: no color data"),
        ("desc: true", "desc: false"),
    ],
)
def test_any_plan_edit_changes_the_digest(tmp_path: Path, old: str, new: str) -> None:
    plans = PLANS.read_text(encoding="utf-8")
    assert plans.count(old) == 1
    assert _legacy_digest(tmp_path, plans=plans.replace(old, new)) != GOLD_DIGEST


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("# --- join", "# --- a join of two tables"),
        ("  tags: [joins]\n", "  tags: [joins, top-n]\n"),
        ("  status: draft\n", "  status: retired\n"),
        ("  difficulty: medium\n", "  difficulty: hard\n"),
        ("\n\n# --- not in the data", "\n\n\n\n# --- not in the data"),
        ("{Name: Iron Maiden, albums: 21}", '{"Name": "Iron Maiden", albums: 21}'),
    ],
)
def test_edits_outside_the_gold_content_keep_the_digest(tmp_path: Path, old: str, new: str) -> None:
    text = GOLD.read_text(encoding="utf-8")
    assert text.count(old) == 1
    assert _legacy_digest(tmp_path, text.replace(old, new)) == GOLD_DIGEST


def test_plans_may_sit_under_a_plans_key(tmp_path: Path) -> None:
    wrapped = tmp_path / "plans.yaml"
    body = PLANS.read_text(encoding="utf-8").split("\n", 1)[1]
    wrapped.write_text(
        "plans:\n" + "".join(f"  {line}\n" for line in body.splitlines()), encoding="utf-8"
    )
    assert load_legacy_plans(wrapped) == load_legacy_plans(PLANS)
    assert gold_digest(load_legacy(GOLD, wrapped)) == GOLD_DIGEST


def test_a_plan_for_an_unknown_case_is_refused(tmp_path: Path) -> None:
    plans = tmp_path / "plans.yaml"
    plans.write_text(
        PLANS.read_text(encoding="utf-8") + "chinook_999:\n  kind: sql\n", encoding="utf-8"
    )
    with pytest.raises(SuiteError, match=r"plans for unknown case ids: chinook_999"):
        load_legacy(GOLD, plans)


@pytest.mark.parametrize("content", ["- a\n- b\n", "chinook_001: just text\n", "plans: [1, 2]\n"])
def test_a_plans_file_that_is_not_a_map_of_plans_is_refused(tmp_path: Path, content: str) -> None:
    plans = tmp_path / "plans.yaml"
    plans.write_text(content, encoding="utf-8")
    with pytest.raises(SuiteError, match="a plans file maps case ids to plans"):
        load_legacy_plans(plans)


def _broken_gold(tmp_path: Path) -> tuple[Path, str]:
    """A copy of gold.yaml with a bad outcome, and where that outcome stands in it."""
    text = GOLD.read_text(encoding="utf-8").replace("viewer: refused", "viewer: denied")
    old = tmp_path / "gold.yaml"
    old.write_text(text, encoding="utf-8")
    at = text.index("denied")
    line = text.count("\n", 0, at) + 1
    return old, f"{line}:{at - text.rfind(chr(10), 0, at)}"


def test_migrate_refuses_a_broken_gold_file_and_writes_nothing(tmp_path: Path) -> None:
    old, _ = _broken_gold(tmp_path)
    result = _nl2sql("suite", "migrate", str(old), "-o", "new.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("pytest-nl2sql: ")
    assert (
        "case 'chinook_001': outcome for viewer must be one of allowed, refused, unanswerable, clarify"
        in result.stderr
    )
    assert not (tmp_path / "new.yaml").exists()


@pytest.mark.xfail(
    strict=True,
    reason="BUG: a migration error names the output file (not written) and a line:col of the migrated text, "
    "not the 0.6 file the user has to fix",
)
def test_migrate_points_at_the_problem_in_the_old_file(tmp_path: Path) -> None:
    old, where = _broken_gold(tmp_path)
    with pytest.raises(SuiteError) as info:
        migrate(old, tmp_path / "new.yaml")
    assert str(info.value).startswith(f"{old}:{where}: case 'chinook_001': outcome for viewer")


@pytest.mark.xfail(
    strict=True,
    reason="BUG: the legacy loader reports line:col of the migrated text (one line down, columns shifted)",
)
def test_load_legacy_points_at_the_problem_in_the_old_file(tmp_path: Path) -> None:
    old, where = _broken_gold(tmp_path)
    with pytest.raises(SuiteError) as info:
        load_legacy(old)
    assert str(info.value).startswith(f"{old}:{where}: case 'chinook_001': outcome for viewer")


def test_migrate_refuses_a_file_without_cases(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="a 0.6 gold file has a 'cases:' list"):
        migrate_text("gold: []\n", path="old.yaml")
    with pytest.raises(SuiteError, match="a 0.6 gold file is a map"):
        migrate_text("- id: x\n", path="old.yaml")


def test_a_comment_on_a_case_last_line_stays_on_that_line() -> None:
    old = (
        "cases:\n- id: a\n  question: What is the weather?\n  datasource: chinook\n  status: approved\n"
        "  expected: {admin: unanswerable}\n  gold_sql: null   # nothing to query\n"
    )
    new = migrate_text(old, {"a": {"kind": "not_answerable"}})
    assert "  sql: null   # nothing to query\n" in new
    assert parse_suite(new).get("a").plan == {"kind": "not_answerable"}
