"""Seeding drafts from a schema: 50 per demo database, all SQL runs, questions in words."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest
import sqlglot

from pytest_nl2sql.datasources import introspect
from pytest_nl2sql.datasources.guard import sqlglot_dialect
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.lock import write_atomic
from pytest_nl2sql.suitefile.model import Origin, Outcome, Status
from pytest_nl2sql.suitefile.yamltext import dump_suite
from pytest_nl2sql.upkeep.audit import audit_suite, format_findings
from pytest_nl2sql.upkeep.drafts import PROMOTION_STEPS
from pytest_nl2sql.upkeep.feedback import FeedbackStore, export
from pytest_nl2sql.upkeep.regenerate import regenerate
from pytest_nl2sql.upkeep.seed import KINDS, noun_plural, noun_singular, seed, words, write_drafts

from .conftest import DEMO_DATASOURCES, Demo

_QUOTED = re.compile(r'"[^"]*"')
_RAW_NAME = re.compile(r"\w*_\w*|\w*[a-z][A-Z]\w*")


@pytest.fixture(scope="module")
def seeded(demo: Demo) -> dict[str, list]:
    return {name: seed(name, demo.registry) for name in DEMO_DATASOURCES}


@pytest.mark.parametrize("name", DEMO_DATASOURCES)
def test_fifty_drafts_whose_sql_all_runs(demo: Demo, seeded: dict[str, list], name: str) -> None:
    cases = seeded[name]
    assert len(cases) == 50
    assert [c.id for c in cases] == [f"seed_{name}_{n:03d}" for n in range(1, 51)]
    adapter = demo.registry.get(name)
    for case in cases:
        result = adapter.execute(case.sql)  # raises QueryError if it does not run
        assert result.rows, case.id
        assert not result.truncated, case.id


@pytest.mark.parametrize("name", DEMO_DATASOURCES)
def test_drafts_carry_what_the_spec_asks(demo: Demo, seeded: dict[str, list], name: str) -> None:
    schema = introspect(demo.registry.get(name))
    kinds = set()
    for case in seeded[name]:
        assert case.status is Status.DRAFT and case.origin is Origin.SEEDED
        assert case.datasources == (name,)
        assert dict(case.outcome) == {"admin": Outcome.ALLOWED}
        assert case.tags[0] == "seeded" and case.tags[1] in KINDS
        kinds.add(case.tags[1])
        assert case.tables and all(t in schema.tables for t in case.tables)
        for column in case.columns:
            table, _, col = column.partition(".")
            assert table in case.tables, (case.id, column)
            schema.tables[table].column(col)  # KeyError if the column does not exist
        if case.order_matters:
            tree = sqlglot.parse_one(case.sql, read=sqlglot_dialect("sqlite"))
            assert tree.args.get("order"), f"{case.id}: order_matters without ORDER BY"
    assert kinds == set(KINDS), f"{name}: every kind of question is drafted"


@pytest.mark.parametrize("name", DEMO_DATASOURCES)
def test_questions_read_naturally(seeded: dict[str, list], name: str) -> None:
    for case in seeded[name]:
        text = _QUOTED.sub("", case.question)  # sample values are quoted as the data holds them
        assert not _RAW_NAME.findall(text), f"{case.id}: raw identifier in {case.question!r}"
        assert case.question[0].isupper() and case.question[-1] in "?.", case.question
        assert "  " not in case.question
    assert len({c.question for c in seeded[name]}) == 50


def test_a_question_about_groups_reads_as_english(seeded: dict[str, list]) -> None:
    questions = {c.question for c in seed_all(seeded)}
    assert "How many invoices are there for each billing country?" in questions


def seed_all(seeded: dict[str, list]) -> list:
    return [c for cases in seeded.values() for c in cases]


def test_seeding_is_deterministic_for_a_seed(demo: Demo, seeded: dict[str, list]) -> None:
    again = seed("support", demo.registry)
    assert again == seeded["support"]
    other = seed("support", demo.registry, seed=7)
    assert [c.question for c in other] != [c.question for c in again]
    assert len(seed("support", demo.registry, count=5)) == 5


def test_names_become_words() -> None:
    assert words("BillingCountry") == "billing country"
    assert words("billing_country") == "billing country"
    assert words("MediaTypeId") == "media type ID"
    assert noun_plural("invoice line") == "invoice lines"
    assert noun_plural("category") == "categories"
    assert noun_plural("status") == "statuses"
    assert noun_plural("tickets") == "tickets"
    assert noun_singular("satisfaction ratings") == "satisfaction rating"
    assert noun_singular("slas") == "SLA"


def test_seeded_file_loads_with_the_promotion_steps(demo: Demo, seeded: dict[str, list], tmp_path: Path) -> None:
    out = tmp_path / "drafts.yaml"
    write_drafts(out, seeded["chinook"], config=demo.config)
    suite = load_suite(out)
    assert len(suite) == 50 and suite.count(Status.DRAFT) == 50
    assert list(suite.cases) == seeded["chinook"]
    header = out.read_text().split("version: 1")[0]
    for step in PROMOTION_STEPS:
        assert step in header


def test_drafts_do_not_run(pytester: pytest.Pytester, demo: Demo, seeded: dict[str, list], tmp_path: Path) -> None:
    seeded_file = tmp_path / "seeded.yaml"
    write_drafts(seeded_file, seeded["webanalytics"], config=demo.config)
    store = FeedbackStore(tmp_path / "feedback.sqlite")
    run = store.record("How many tracks are there?", "admin", _Answer("SELECT COUNT(*) FROM Track", ("chinook",)))
    store.rate(run, good=True)
    exported = tmp_path / "feedback.yaml"
    assert len(export(store, exported, config=demo.config)) == 1
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", str(seeded_file),
        "--nl2sql-suite", str(exported),
        "--nl2sql-config", str(demo.root / "nl2sql.yaml"),
        "--nl2sql-mode", "retrieval",
        "-p", "no:cacheprovider",
    )
    assert "collected 0 items" in result.stdout.str()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


class _Answer:
    status = "ok"

    def __init__(self, sql: str, datasources: tuple[str, ...]) -> None:
        self.sql = sql
        self.datasources = datasources


@pytest.mark.parametrize("name", DEMO_DATASOURCES)
def test_promoted_seeded_drafts_pass_the_audit(demo: Demo, seeded: dict[str, list], name: str, tmp_path: Path) -> None:
    """Seeded gold keeps ties at top-N and rounds float sums, so the audit finds nothing."""
    path = tmp_path / "promoted.yaml"
    write_atomic(path, dump_suite(attrs.evolve(c, status=Status.APPROVED) for c in seeded[name]))
    assert not regenerate(path, demo.registry).failed
    findings = audit_suite(path, demo.registry)
    assert findings == [], format_findings(findings)
