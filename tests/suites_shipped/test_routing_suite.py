"""The shipped routing suite (suites/routing.yaml) says what the spec's "The routing suite" says.

Checks the file itself (cases, tags, the header), that its gold block is what
scripts/sync_routing_gold.py writes from suites/chinook.yaml, and, against a freshly built demo,
that regenerate leaves it byte for byte and that `--nl2sql-cases support` selects every case
about support.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import DatasourceRegistry
from pytest_nl2sql.demo import DEMO_DATASOURCES
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import EvalCase, EvalSuite, Kind, Outcome, Status
from pytest_nl2sql.upkeep.init import init_demo
from pytest_nl2sql.upkeep.regenerate import regenerate

REPO = Path(__file__).resolve().parents[2]
ROUTING = REPO / "suites" / "routing.yaml"
CHINOOK = REPO / "suites" / "chinook.yaml"
SYNC_SCRIPT = REPO / "scripts" / "sync_routing_gold.py"

SOURCE_TAGS = ("sample", "paraphrase", "hand", "cross-database", "gold")
NAMES = tuple(DEMO_DATASOURCES)


def _load_sync() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sync_routing_gold", SYNC_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sync_routing_gold", module)
    spec.loader.exec_module(module)
    return module


sync_gold = _load_sync()


@pytest.fixture(scope="module")
def suite() -> EvalSuite:
    return load_suite(ROUTING, use_cache=False)


def _tagged(suite: EvalSuite, tag: str) -> list[EvalCase]:
    return [case for case in suite if tag in case.tags]


def _header(path: Path) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return "\n".join(lines)


# -- the file -----------------------------------------------------------------------------


def test_every_case_is_an_approved_hand_written_admin_case_without_tables(suite: EvalSuite) -> None:
    assert suite.version == 1
    for case in suite:
        assert case.status is Status.APPROVED, case.id
        assert case.origin.value == "hand", case.id
        assert dict(case.outcome) == {"admin": Outcome.ALLOWED}, case.id
        assert case.tables == (), f"{case.id}: a routing case names no tables"
        assert set(case.datasources) <= set(NAMES), case.id


def test_every_case_has_one_source_tag_and_its_datasources_as_tags(suite: EvalSuite) -> None:
    for case in suite:
        sources = [tag for tag in case.tags if tag in SOURCE_TAGS]
        assert len(sources) == 1, f"{case.id}: tags {case.tags} should hold one of {SOURCE_TAGS}"
        assert set(case.datasources) <= set(case.tags), f"{case.id}: tag it with {case.datasources}"
        assert set(case.tags) <= set(SOURCE_TAGS) | set(case.datasources), case.id


def test_sample_cases_are_the_demo_sample_questions_exactly(suite: EvalSuite) -> None:
    samples = _tagged(suite, "sample")
    for name, demo in DEMO_DATASOURCES.items():
        mine = [case for case in samples if case.datasources == (name,)]
        assert [case.question for case in mine] == list(demo.sample_questions), name
    assert len(samples) == sum(len(d.sample_questions) for d in DEMO_DATASOURCES.values())
    assert all(case.kind is Kind.ROUTING for case in samples)


def test_written_cases_are_mostly_support_and_webanalytics(suite: EvalSuite) -> None:
    written = _tagged(suite, "paraphrase") + _tagged(suite, "hand")
    assert 40 <= len(written) <= 60
    per_source = Counter(name for case in written for name in case.datasources)
    assert all(len(case.datasources) == 1 for case in written)
    assert per_source["support"] + per_source["webanalytics"] > len(written) / 2
    assert per_source["support"] > per_source["chinook"]
    assert per_source["webanalytics"] > per_source["chinook"]
    for name in ("support", "webanalytics"):
        assert any(c.datasources == (name,) for c in _tagged(suite, "paraphrase")), name


def test_ten_written_cases_carry_sql_and_rows_and_every_other_case_is_a_routing_case(
    suite: EvalSuite,
) -> None:
    answered = [case for case in suite if case.sql is not None]
    assert len(answered) == 10
    for case in answered:
        assert {"paraphrase", "hand"} & set(case.tags), case.id
        assert case.kind is Kind.ANSWER, case.id
        assert len(case.datasources) == 1, case.id
        assert case.rows, f"{case.id}: rows are written by regenerate"
    for case in suite:
        if case.sql is None:
            assert case.kind is Kind.ROUTING, case.id
            assert case.rows is None and not case.alt_sql and not case.alt_rows, case.id


def test_three_cross_database_cases_each_need_two_databases(suite: EvalSuite) -> None:
    cross = _tagged(suite, "cross-database")
    assert len(cross) == 3
    for case in cross:
        assert len(set(case.datasources)) == 2, case.id
        assert case.kind is Kind.ROUTING, case.id
    assert all(len(case.datasources) == 1 for case in suite if case not in cross)


def test_header_says_how_to_run_it_and_names_the_cases_with_two_answers(suite: EvalSuite) -> None:
    header = _header(ROUTING)
    assert "nl2sql eval run --mode retrieval --suite evals/routing.yaml --out eval_routing.json" in header
    assert "nl2sql eval run --mode full --suite evals/routing.yaml --max-cost 5" in header
    for tag in SOURCE_TAGS:
        assert tag in header, tag
    ids = {case.id for case in suite}
    named = set(re.findall(r"\brouting_[a-z0-9_]+\b", header))
    assert named, "the header names the cases with two defensible answers"
    assert named <= ids, f"the header names cases the suite does not hold: {sorted(named - ids)}"
    assert "customers" in header


# -- the gold block -------------------------------------------------------------------------


def test_gold_block_is_what_the_sync_script_writes_from_the_chinook_suite() -> None:
    if not CHINOOK.is_file():
        pytest.skip("suites/chinook.yaml is not there yet; the gold block is built from it")
    assert sync_gold.current_block(ROUTING) == sync_gold.gold_block(CHINOOK), (
        "run: python scripts/sync_routing_gold.py"
    )


def test_gold_cases_copy_each_answerable_chinook_question(suite: EvalSuite) -> None:
    if not CHINOOK.is_file():
        pytest.skip("suites/chinook.yaml is not there yet; the gold block is built from it")
    chinook = load_suite(CHINOOK, use_cache=False)
    answerable = [c for c in chinook.approved() if c.kind is Kind.ANSWER and c.sql is not None]
    gold = _tagged(suite, "gold")
    assert [(c.id, c.question) for c in gold] == [(f"routing_gold_{c.id}", c.question) for c in answerable]
    assert all(c.datasources == ("chinook",) and c.kind is Kind.ROUTING for c in gold)


_MINI_CHINOOK = """\
version: 1
cases:
- id: chinook_001
  question: How many customers do we have, by country?
  datasources: [chinook]
  status: approved
  origin: hand
  outcome: {admin: allowed, viewer: refused}
  order_matters: false
  sql: SELECT Country, COUNT(*) AS n FROM Customer GROUP BY Country
  rows:
  - {Country: USA, n: 13}
- id: chinook_002
  question: What is the weather in Oslo?
  datasources: [chinook]
  status: approved
  origin: hand
  outcome: {admin: unanswerable}
  sql: null
- id: chinook_003
  question: "Which albums: a draft?"
  datasources: [chinook]
  status: draft
  origin: seeded
  outcome: {admin: allowed}
  sql: SELECT Title FROM Album
- id: chinook_004
  question: "Which tracks cost more than $0.99?"
  datasources: [chinook]
  status: approved
  origin: hand
  outcome: {admin: allowed}
  order_matters: false
  sql: SELECT Name FROM Track WHERE UnitPrice > 0.99
  rows: []
"""


def test_sync_rewrites_only_the_gold_block_and_twice_changes_nothing(tmp_path: Path) -> None:
    chinook = tmp_path / "chinook.yaml"
    chinook.write_text(_MINI_CHINOOK, encoding="utf-8")
    routing = tmp_path / "routing.yaml"
    original = ROUTING.read_bytes().replace(b"\n", b"\r\n")  # line endings are kept too
    routing.write_bytes(original)

    assert sync_gold.main(["--routing", str(routing), "--chinook", str(chinook)]) == 0
    after = routing.read_bytes()
    head, block, tail = sync_gold._split(after.decode("utf-8"), str(routing))
    old_head, _, old_tail = sync_gold._split(original.decode("utf-8"), str(routing))
    assert (head, tail) == (old_head, old_tail)

    gold = [c for c in load_suite(routing, use_cache=False) if "gold" in c.tags]
    assert [(c.id, c.question) for c in gold] == [
        ("routing_gold_chinook_001", "How many customers do we have, by country?"),
        ("routing_gold_chinook_004", "Which tracks cost more than $0.99?"),
    ]
    assert all(c.tags == ("gold", "chinook") and c.kind is Kind.ROUTING for c in gold)

    assert sync_gold.sync(routing, chinook) is False
    assert routing.read_bytes() == after
    assert sync_gold.main(["--routing", str(routing), "--chinook", str(chinook), "--check"]) == 0


def test_sync_check_reports_a_stale_block_and_missing_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chinook = tmp_path / "chinook.yaml"
    chinook.write_text(_MINI_CHINOOK, encoding="utf-8")
    routing = tmp_path / "routing.yaml"
    routing.write_text(f"version: 1\ncases:\n{sync_gold.BEGIN}\n{sync_gold.END}\n", encoding="utf-8")
    assert sync_gold.main(["--routing", str(routing), "--chinook", str(chinook), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out

    routing.write_text("version: 1\ncases: []\n", encoding="utf-8")
    assert sync_gold.main(["--routing", str(routing), "--chinook", str(chinook)]) == 1
    err = capsys.readouterr().err
    assert "# --- gold: generated by scripts/sync_routing_gold.py ---" in err
    assert routing.read_text(encoding="utf-8") == "version: 1\ncases: []\n"

    assert sync_gold.main(["--routing", str(routing), "--chinook", str(tmp_path / "none.yaml")]) == 1
    assert "the Chinook suite is missing" in capsys.readouterr().err


# -- against the demo -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh demo project whose evals/routing.yaml is a copy of the repo's suite."""
    root = tmp_path_factory.mktemp("demo")
    init_demo(root)
    shutil.copyfile(ROUTING, root / "evals" / "routing.yaml")
    named = root / "evals" / "chinook.yaml"
    if not named.exists():  # until the Chinook suite ships, evals.yaml names a missing file
        named.write_text("version: 1\ncases: []\n", encoding="utf-8")
    return root


def test_regenerate_leaves_the_suite_byte_for_byte(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "routing.yaml"
    shutil.copyfile(ROUTING, copy)
    registry = DatasourceRegistry.from_config(load_config(demo / "nl2sql.yaml"))
    report = regenerate(copy, registry)
    assert report.failed == ()
    assert report.cases_written == ()
    assert len(report.unchanged) == 10
    assert copy.read_bytes() == ROUTING.read_bytes()


def test_cases_option_with_a_datasource_runs_every_case_about_it(demo: Path, suite: EvalSuite) -> None:
    env = {**os.environ, "NL2SQL_CACHE_DIR": str(demo / ".cache")}
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run(
        [
            sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
            "--nl2sql-suite", "evals/routing.yaml", "--nl2sql-mode", "retrieval",
            "--nl2sql-cases", "support",
        ],
        cwd=demo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    collected = set(re.findall(r"::(routing_[a-z0-9_]+)\[admin\]", proc.stdout))
    expected = {case.id for case in suite if "support" in case.datasources}
    assert collected == expected
    assert {"routing_cross_1", "routing_cross_2"} <= collected
