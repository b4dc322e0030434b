"""The shipped Chinook gold suite (``suites/chinook.yaml``): its gold data, its cases, its run.

The suite is what a reviewer signed off on, so these tests hold it to what docs/chinook-suite.md
promises: the gold data equals 0.6's gold set (pinned by digest), every outcome follows the
demo's role policy, the rows are exactly what regenerate writes, and mode plans passes every
item against a freshly initialised demo project.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import attrs
import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import DatasourceRegistry, introspect
from pytest_nl2sql.engine import PlanModel, validate_sql
from pytest_nl2sql.suitefile.digest import gold_digest
from pytest_nl2sql.suitefile.legacy import RENAMES, load_legacy, load_legacy_plans, migrate_text
from pytest_nl2sql.suitefile.loader import load_suite, parse_suite
from pytest_nl2sql.suitefile.model import EvalCase, EvalSuite, Outcome, Status
from pytest_nl2sql.upkeep.init import init_demo
from pytest_nl2sql.upkeep.regenerate import regenerate

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent.parent / "suites" / "chinook.yaml"
LEGACY = HERE / "legacy" / "chinook_gold.yaml"
LEGACY_PLANS = HERE / "legacy" / "chinook_gold_plans.yaml"
ROLES = ("admin", "analyst", "viewer")

#: SHA-256 of the gold content (questions, SQL, rows, alternatives, outcomes, tables, columns,
#: plans) of suites/chinook.yaml and of 0.6's chinook_gold*.yaml. Change it only together with
#: a reviewed change of the gold data, and regenerate the legacy files with make_legacy.py.
# 2026-12-02: chinook_052's plan groups by {year: InvoiceDate} (it grouped by date_format while
# selecting year, which PostgreSQL rejects; tests/realdb/test_chinook_postgres.py)
GOLD_SHA256 = "956a6aa838b3eb5ae5c1a67d78395096f4f6da5b9b7d9644532d9f6a2a9a2916"


@pytest.fixture(scope="module")
def suite() -> EvalSuite:
    return load_suite(SUITE, use_cache=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh ``pytest-nl2sql init --demo`` project (its own databases and nl2sql.yaml)."""
    root = tmp_path_factory.mktemp("demo")
    init_demo(root)
    return root


def approved_answerable(suite: EvalSuite) -> list[EvalCase]:
    return [c for c in suite.approved() if c.sql is not None]


# -- the gold data ------------------------------------------------------------------------


def test_chinook_suite_holds_the_gold_data_unchanged(suite: EvalSuite) -> None:
    legacy = load_legacy(LEGACY, LEGACY_PLANS)
    assert gold_digest(legacy.cases) == GOLD_SHA256, "0.6's chinook_gold*.yaml changed"
    assert gold_digest(suite.cases) == GOLD_SHA256, (
        "the gold data of suites/chinook.yaml changed: if the change is reviewed, update "
        "GOLD_SHA256 and rewrite the 0.6 fixture with tests/suites_shipped/make_legacy.py"
    )


def test_migrating_the_0_6_files_gives_the_shipped_suite(suite: EvalSuite) -> None:
    text = LEGACY.read_text(encoding="utf-8")
    migrated = parse_suite(migrate_text(text, load_legacy_plans(LEGACY_PLANS)), "migrated.yaml")
    # clarifications (issue 24) are new in version 1: the 0.6 files have none, the rest is equal
    shipped = tuple(attrs.evolve(c, clarifications=(), default=None, turns=1) for c in suite.cases)
    assert migrated.cases == shipped  # every field, tags and status included


def test_the_0_6_files_use_only_the_old_key_names() -> None:
    keys = Counter(re.findall(r"^  ([a-z_]+):", LEGACY.read_text(encoding="utf-8"), re.MULTILINE))
    assert not set(keys) & set(RENAMES.values())
    assert "plan" not in keys
    assert keys["datasource"] == keys["expected"] == keys["question"]
    plans = load_legacy_plans(LEGACY_PLANS)
    assert set(plans) == {c.id for c in load_legacy(LEGACY).cases if c.approved}


# -- the cases ------------------------------------------------------------------------------


def test_the_suite_loads_and_covers_what_it_promises(suite: EvalSuite) -> None:
    ids = [c.id for c in suite.cases]
    assert ids == [f"chinook_{n:03d}" for n in range(1, len(ids) + 1)]
    answerable = approved_answerable(suite)
    for_everyone = [c for c in answerable if all(o is Outcome.ALLOWED for o in c.outcome.values())]
    assert len(answerable) >= 43 and len(for_everyone) >= 40
    assert {c.difficulty.value for c in answerable if c.difficulty} == {"easy", "medium", "hard"}
    outcomes = Counter(o for c in suite.approved() for o in c.outcome.values())
    assert (
        outcomes[Outcome.REFUSED] and outcomes[Outcome.UNANSWERABLE] and outcomes[Outcome.CLARIFY]
    )
    admin_only = [
        c
        for c in answerable
        if {r: o.value for r, o in c.outcome.items()}
        == {"admin": "allowed", "analyst": "refused", "viewer": "refused"}
    ]
    assert len(admin_only) >= 3
    assert sum(1 for c in answerable if c.alt_sql) >= 2
    groups = Counter(c.paraphrase_group for c in suite.approved() if c.paraphrase_group)
    assert sum(1 for n in groups.values() if n >= 2) >= 2
    assert 2 <= suite.count(Status.DRAFT) <= 3 and suite.count(Status.RETIRED) == 1
    for case in suite.cases:
        assert case.datasources == ("chinook",), case.id
        if case.approved:
            assert set(case.outcome) == set(ROLES), case.id
            assert case.origin.value == "hand", case.id


def test_unanswerable_and_clarify_cases_have_no_sql_and_the_same_outcome_for_every_role(
    suite: EvalSuite,
) -> None:
    for case in suite.approved():
        kinds = set(case.outcome.values())
        if kinds & {Outcome.UNANSWERABLE, Outcome.CLARIFY}:
            assert len(kinds) == 1 and case.sql is None and not case.alt_sql, case.id
            assert not case.tables and not case.columns, case.id


def test_every_approved_case_has_a_plan_that_parses_and_fits_its_outcome(suite: EvalSuite) -> None:
    for case in suite.approved():
        assert case.plan is not None, f"case {case.id!r} has no plan (mode plans needs one)"
        plan = PlanModel.from_dict(dict(case.plan), path=f"case {case.id!r} plan")
        kinds = set(case.outcome.values())
        if Outcome.UNANSWERABLE in kinds:
            assert plan.kind == "not_answerable" and plan.reason, case.id
        elif Outcome.CLARIFY in kinds:
            assert plan.kind == "clarify" and plan.clarification, case.id
        else:
            assert plan.kind == "answer" and plan.datasource == "chinook", case.id


def test_the_header_states_the_suite_s_real_counts(suite: EvalSuite) -> None:
    text = SUITE.read_text(encoding="utf-8")
    header = "\n".join(line[1:] for line in text.splitlines() if line.startswith("#"))
    m = re.search(r"(\d+) cases: (\d+) approved, (\d+) draft .*?, (\d+) retired", header)
    assert m, "the header's case counts line is missing"
    statuses = (
        len(suite),
        *(suite.count(s) for s in (Status.APPROVED, Status.DRAFT, Status.RETIRED)),
    )
    assert tuple(map(int, m.groups())) == statuses
    answerable = approved_answerable(suite)
    m = re.search(r"(\d+) answerable: (\d+) easy, (\d+) medium, (\d+) hard", header)
    assert m, "the header's difficulty line is missing"
    difficulty = Counter(c.difficulty.value for c in answerable if c.difficulty)
    assert tuple(map(int, m.groups())) == (
        len(answerable),
        difficulty["easy"],
        difficulty["medium"],
        difficulty["hard"],
    )
    for role in ROLES:
        m = re.search(rf"^[ \t]+{role}[ \t]+(.*?)(?:\(|$)", header, re.MULTILINE)
        assert m, f"the header has no outcome line for {role}"
        stated = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", m.group(1))}
        actual = Counter(c.outcome[role].value for c in suite.approved())
        assert stated == dict(actual), role
    m = re.search(r"Tags \(approved cases\):(.*?)\.", header, re.DOTALL)
    assert m, "the header's tag counts are missing"
    stated_tags = {tag: int(n) for tag, n in re.findall(r"([a-z-]+) (\d+)", m.group(1))}
    assert stated_tags == dict(Counter(t for c in suite.approved() for t in c.tags))


def test_outcomes_follow_the_demo_role_policy_and_tables_are_what_the_sql_reads(
    suite: EvalSuite, demo: Path
) -> None:
    config = load_config(demo / "nl2sql.yaml")
    registry = DatasourceRegistry.from_config(config)
    try:
        info = introspect(registry.get("chinook"))
    finally:
        registry.close()
    schema = {name: [c.name for c in t.columns] for name, t in info.tables.items()}
    for case in approved_answerable(suite):
        read = validate_sql(
            case.sql,
            dialect="sqlite",
            datasource="chinook",
            schema=schema,
            policy=config.role("admin"),
        )
        assert read.ok, f"case {case.id!r}: {read.message}"
        assert set(case.tables) == set(read.tables), (
            f"case {case.id!r}: tables are not what the SQL reads"
        )
        assert set(case.columns) <= set(read.columns), (
            f"case {case.id!r}: columns the SQL does not read"
        )
        for role in ROLES:
            policy = config.role(role)
            denied = [t for t in case.tables if not policy.allows_table("chinook", t)] + [
                c for c in case.columns if not policy.allows_column("chinook", *c.split("."))
            ]
            want = Outcome.REFUSED if denied else Outcome.ALLOWED
            assert case.outcome[role] is want, (
                f"case {case.id!r}: {role} should be {want.value} (denied: {denied})"
            )
            check = validate_sql(
                case.sql, dialect="sqlite", datasource="chinook", schema=schema, policy=policy
            )
            assert check.ok == (want is Outcome.ALLOWED), (
                f"case {case.id!r} as {role}: validator says {check.status}"
            )


def _without_rows(text: str) -> str:
    """The suite text with every ``rows:``/``alt_rows:`` block removed (a clarification's too)."""
    out, skipping = [], ""
    for line in text.splitlines(keepends=True):
        key = re.match(r"^( {2}| {4})(rows|alt_rows):", line)
        if key:
            skipping = key.group(1)
            continue
        if skipping and line.startswith((skipping + "- ", skipping + "  ")):
            continue
        skipping = ""
        out.append(line)
    return "".join(out)


def test_regenerate_against_a_fresh_demo_database_writes_the_suite_byte_for_byte(
    demo: Path, tmp_path: Path
) -> None:
    original = SUITE.read_bytes()
    copy = tmp_path / "chinook.yaml"
    copy.write_bytes(original)
    stripped = tmp_path / "stripped.yaml"
    stripped.write_text(_without_rows(original.decode("utf-8")), encoding="utf-8")
    assert "rows:" not in stripped.read_text(encoding="utf-8")
    registry = DatasourceRegistry.from_config(load_config(demo / "nl2sql.yaml"))
    try:
        unchanged = regenerate(copy, registry)
        rewritten = regenerate(stripped, registry)
    finally:
        registry.close()
    assert unchanged.failed == () and not unchanged.file_changed
    assert copy.read_bytes() == original
    assert rewritten.failed == ()
    with_readings = [c for c in load_suite(copy).cases if c.clarifications]  # issue 24: each reading's rows
    assert len(with_readings) == 3
    assert len(rewritten.cases_written) == len(approved_answerable(load_suite(copy))) + len(with_readings)
    assert stripped.read_bytes() == original


def test_init_demo_ships_the_suite_unchanged(demo: Path) -> None:
    assert (demo / "evals" / "chinook.yaml").read_bytes() == SUITE.read_bytes()


# -- the run ----------------------------------------------------------------------------------


def _expected_items(suite: EvalSuite, clarify: bool) -> int:
    return sum(
        1
        for c in suite.approved()
        for o in c.outcome.values()
        if clarify or o is not Outcome.CLARIFY
    )


@pytest.mark.parametrize("clarify", [False, True], ids=["default", "clarify"])
def test_mode_plans_passes_every_item(
    suite: EvalSuite, demo: Path, tmp_path: Path, clarify: bool
) -> None:
    run_dir = tmp_path / "project"
    shutil.copytree(demo, run_dir)
    args = [
        sys.executable,
        "-m",
        "pytest",
        "--nl2sql-suite",
        "evals/chinook.yaml",
        "--nl2sql-mode",
        "plans",
        "-p",
        "no:cacheprovider",
        "-q",
    ]
    if clarify:
        args.append("--nl2sql-clarify")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(args, cwd=run_dir, env=env, capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    want = _expected_items(suite, clarify)
    summary = [line for line in proc.stdout.splitlines() if line.strip()][-1]
    assert re.fullmatch(rf"=* ?{want} passed in .*", summary), (
        f"expected {want} passed, got: {summary}"
    )
