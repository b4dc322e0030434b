"""The replay engine checks a batch of answers ahead (``prepare_cases``; plugin/concurrency.py,
"Checked in batches"): the same verdicts, computed before the items ask, nothing run."""

from __future__ import annotations

import importlib
from pathlib import Path

import attrs
import pytest

from pytest_nl2sql.datasources import guard
from pytest_nl2sql.engine import validator
from pytest_nl2sql.engine.replay import Prediction, ReplayEngine
from pytest_nl2sql.suitefile.loader import load_suite

from .conftest import copy_shop

#: One prediction of each kind the replay engine answers: a query that runs, one with SQLite's
#: double-quoted string (the string fallback), a write (the guard refuses), an unknown column,
#: a column the clerk may not read, an unknown datasource, an answer without SQL.
PREDICTIONS = [
    Prediction(id="shop_001", sql="SELECT COUNT(*) FROM customer"),
    Prediction(id="shop_002", sql='SELECT name FROM customer WHERE city = "Paris"'),
    Prediction(id="shop_003", sql="DELETE FROM orders"),
    Prediction(id="shop_003", role="clerk", sql="SELECT nope FROM orders"),
    Prediction(id="shop_004", sql="SELECT email FROM customer"),
    Prediction(id="shop_001", role="clerk", sql="SELECT 1", datasource="elsewhere"),
    Prediction(id="shop_002", role="clerk", sql=None, status="refused", message="not for you"),
]
ROLES = ("admin", "clerk")


def _fresh_memos() -> None:
    guard.VERDICTS.clear()
    validator.VERDICTS.clear()


def _answers(engine: ReplayEngine, cases: list, roles=ROLES) -> list[dict]:
    return [{k: v for k, v in attrs.asdict(engine.answer_case(c, r)).items() if k != "latency_s"} for c in cases for r in roles]


def test_prepared_answers_are_the_unprepared_ones_and_compute_no_verdict(shop: Path, project) -> None:
    cases = load_suite(shop / "evals" / "shop.yaml").cases
    _fresh_memos()
    unprepared = _answers(ReplayEngine(PREDICTIONS, project), cases)
    _fresh_memos()
    engine = ReplayEngine(PREDICTIONS, project)
    engine.prepare_cases([(c, r) for c in cases for r in ROLES])
    computed = (guard.VERDICTS.misses, validator.VERDICTS.misses)
    assert computed[0] >= 5 and computed[1] >= 4  # the guard and the validator ran ahead
    assert _answers(engine, cases) == unprepared
    assert (guard.VERDICTS.misses, validator.VERDICTS.misses) == computed  # each answer read its verdicts
    statuses = {(a["status"], (a["error"] or "")[:18]) for a in unprepared}
    assert {("ok", ""), ("refused", ""), ("error", "statement refused:")} <= statuses


def test_a_runnable_answer_checked_with_its_batch_is_not_looked_up_again(shop: Path, project) -> None:
    """An answer ``prepare_cases`` found runnable is handed to its item: the engine asks neither
    the guard's nor the validator's memo again (the adapter still asks the guard about what it
    runs: its own check); asked once more (a repeat), it is checked as before."""
    cases = load_suite(shop / "evals" / "shop.yaml").cases
    _fresh_memos()
    engine = ReplayEngine(PREDICTIONS, project)
    engine.prepare_cases([(cases[0], "admin")])

    def asked() -> tuple[int, int]:
        return guard.VERDICTS.hits + guard.VERDICTS.misses, validator.VERDICTS.hits + validator.VERDICTS.misses

    before = asked()
    assert engine.answer_case(cases[0], "admin").rows == [(3,)]
    assert asked() == (before[0] + 1, before[1])  # the adapter's guard check only
    assert engine.answer_case(cases[0], "admin").rows == [(3,)]  # a second attempt: checked again
    assert asked() == (before[0] + 3, before[1] + 1)


def test_a_batch_keeps_at_most_prepared_max_answers_for_its_items(shop: Path, project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A serial warm run prepares the whole run at once: what is kept for the items is bounded
    (the others are looked up as they ask), and every answer is the same."""
    from pytest_nl2sql.engine import replay

    cases = load_suite(shop / "evals" / "shop.yaml").cases
    pairs = [(c, r) for c in cases for r in ROLES]
    _fresh_memos()
    unprepared = _answers(ReplayEngine(PREDICTIONS, project), cases)
    monkeypatch.setattr(replay, "PREPARED_MAX", 1)
    engine = ReplayEngine(PREDICTIONS, project)
    engine.prepare_cases(pairs)
    assert len(engine._prepared) == 1  # of three runnable answers
    assert _answers(engine, cases) == unprepared
    assert engine._prepared == {}


def test_an_answer_that_could_not_be_checked_with_its_batch_is_checked_when_asked(shop: Path, project) -> None:
    """A check that failed ahead (the database unreadable then) is not what the item gets: the
    item checks again, and answers."""
    cases = load_suite(shop / "evals" / "shop.yaml").cases
    engine = ReplayEngine(PREDICTIONS, project)
    db = shop / "shop.sqlite"
    hidden = db.with_suffix(".away")
    db.rename(hidden)
    try:
        engine.prepare_cases([(cases[0], "admin")])
    finally:
        hidden.rename(db)
    assert engine.answer_case(cases[0], "admin").rows == [(3,)]


def test_preparing_runs_nothing_and_never_raises(shop: Path, project) -> None:
    db = shop / "shop.sqlite"
    before = db.read_bytes()
    engine = ReplayEngine([*PREDICTIONS, Prediction(id="shop_004", role="clerk", sql="SELECT 1/0 FROM customer")], project)
    ran: list[str] = []
    adapter = engine.registry.get("shop")
    execute = adapter.execute
    adapter.execute = lambda sql, **kw: ran.append(sql) or execute(sql, **kw)  # a spy on the real adapter
    cases = load_suite(shop / "evals" / "shop.yaml").cases
    engine.prepare_cases([(c, r) for c in cases for r in (*ROLES, "nobody")])
    engine.prepare_cases([(object(), "admin"), (None, None)])  # not cases at all: left to their items
    assert ran == []
    assert engine.answer_case(cases[0], "admin").rows == [(3,)] and len(ran) == 1
    assert db.read_bytes() == before


BATCHES = """
from pytest_nl2sql.datasources import guard
from pytest_nl2sql.engine import replay, validator

_prepare = replay.ReplayEngine.prepare_cases
_answer = replay.ReplayEngine.answer_case

def prepare_cases(self, pairs):
    pairs = list(pairs)
    with open("batches.txt", "a") as fh:
        fh.write(" ".join(f"{c.id}[{r}]" for c, r in pairs) + "\\n")
    return _prepare(self, pairs)

def answer_case(self, case, role, llm=None):
    misses = guard.VERDICTS.misses + validator.VERDICTS.misses
    answer = _answer(self, case, role, llm)
    with open("computed.txt", "a") as fh:
        fh.write(f"{case.id}[{role}] {guard.VERDICTS.misses + validator.VERDICTS.misses - misses}\\n")
    return answer

replay.ReplayEngine.prepare_cases = prepare_cases
replay.ReplayEngine.answer_case = answer_case
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_checks_its_items_in_a_batch_before_they_ask(
    pytester: pytest.Pytester, shop: Path, workers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_shop(shop, pytester.path, PREDICTIONS)
    pytester.makeconftest(BATCHES)
    monkeypatch.setenv("NL2SQL_CACHE_DIR", "off")  # no verdict remembered from another run
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/shop.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "p.jsonl",
        "-p", "no:cacheprovider", "-p", "no:randomly", "-n", workers,
    )
    result.assert_outcomes(passed=4, failed=1)  # the DELETE is refused by the guard: an error
    batches = [line.split() for line in (pytester.path / "batches.txt").read_text().splitlines()]
    items = ["shop_001[admin]", "shop_002[admin]", "shop_003[admin]", "shop_004[admin]", "shop_004[clerk]"]
    assert sorted(i for batch in batches for i in batch) == items  # each item in one batch
    if workers == "0":
        assert batches == [items]  # the whole run at once, in pytest's order
    computed = dict(line.split() for line in (pytester.path / "computed.txt").read_text().splitlines())
    assert sorted(computed) == items and set(computed.values()) == {"0"}  # no answer computed a verdict


def test_the_engine_reads_each_schema_s_shape_only(shop: Path, project) -> None:
    """The validator reads tables and column names: the replay engine asks the database for
    them and nothing more -- no table is counted and no column sampled (a query per table and
    per column on the full read), before the first answer and after the last."""
    introspect = importlib.import_module("pytest_nl2sql.datasources.introspect")  # the module, not its function
    introspect.clear_schema_cache()
    cases = load_suite(shop / "evals" / "shop.yaml").cases
    engine = ReplayEngine(PREDICTIONS, project)
    answers = _answers(engine, cases)
    assert {"ok", "refused", "error"} <= {a["status"] for a in answers}
    read = list(introspect._cache)
    assert read and all(len(key) == 2 and key[1] == "shape" for key in read), read
    shape = introspect._cache[read[0]]
    assert {t: [c.name for c in info.columns] for t, info in shape.tables.items()}["customer"] == ["id", "name", "city", "email"]
    assert all(info.row_count is None and not any(c.samples for c in info.columns) for info in shape.tables.values())
