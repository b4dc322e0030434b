"""The failure path is bounded and safe: the worst shapes give a verdict or a clear label (the
time is benchmarks/bench_failure_paths.py's job), and what an engine or a database says reaches
the terminal, the JSON report and the step summary neutralised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.reporting import taxonomy
from pytest_nl2sql.reporting.stats import mcnemar_exact, paired_bootstrap_ci
from pytest_nl2sql.scoring.matching import match_rows
from pytest_nl2sql.scoring.mutants import mutants

HOSTILE_ENGINE = '''
from pytest_nl2sql.engine.protocol import Answer, RouteResult

WIDE = [tuple(1 for _ in range(12))]
WRONG = [tuple([1] * 11 + [2])]

class Hostile:
    def route(self, question, role):
        return RouteResult(ranked=[("chinook", 1.0)], shortlist=["chinook"])

    def answer(self, question, role, llm):
        if "per media type" in question:  # a huge integer in the result
            return Answer(status="ok", sql="SELECT big", rows=[("MPEG", 10 ** 5000)], columns=["Name", "tracks"])
        if "by country" in question and role == "admin":  # 12 columns of one value, one wrong cell
            return Answer(status="ok", sql="SELECT wide", rows=WRONG, columns=[f"c{i}" for i in range(12)])
        return Answer(status="error", error="boom\\n::error file=x.py::pwned\\n\\x1b]0;title\\x07",
                      message="::add-mask::secret")

def pytest_nl2sql_make_engine(config, project):
    return Hostile()
'''


@pytest.fixture
def hostile(pytester: pytest.Pytester, project: Path) -> pytest.Pytester:
    pytester.makeconftest(HOSTILE_ENGINE)
    return pytester


def test_hostile_answers_fail_cleanly_with_a_bounded_taxonomy(hostile: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = hostile.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-out", "r.json", "-rA", "--nl2sql-html", "r.html",
                                          "-p", "no:cacheprovider", timeout=300)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out
    # no line starts with a workflow command, whatever the engine said; control characters escaped
    lines = out.splitlines()
    assert not [ln for ln in lines if ln.lstrip().startswith("::")], [ln for ln in lines if "::error" in ln or "add-mask" in ln][:5]
    assert "\x1b" not in out and "\\x1b]0;title\\x07" in out
    assert "<integer of about 5001 digits>" in out
    data = json.loads((project / "r.json").read_text())
    by_id = {r["nodeid"].split("::")[-1]: r for r in data["items"]}
    big = by_id["mini_002[admin]"]
    assert big["verdict"] == "failed" and "<integer of about 5001 digits>" in json.dumps(big["row_diff"])
    wide = by_id["mini_001[admin]"]
    assert wide["taxonomy"]["kinds"][0] == "column_count" or wide["taxonomy"]["spider"] is False
    assert "&lt;integer of about 5001 digits&gt;" in (project / "r.html").read_text()
    assert summary.is_file()


def test_twelve_columns_of_one_value_and_one_wrong_cell_get_their_verdicts() -> None:
    cols = [f"c{i}" for i in range(12)]
    gold = [tuple(1 for _ in cols)]
    pred = [tuple([1] * 11 + [2])]
    assert match_rows(cols, gold, cols, pred).matched is False
    assert taxonomy.spider_result_eq(gold, pred, False) is False
    rows = [tuple(1 for _ in range(4)) for _ in range(10_000)]
    wrong = rows[:-1] + [(1, 1, 1, 2)]
    assert taxonomy.classify(rows, wrong)["kinds"] == ["missing_rows", "extra_rows"]
    assert taxonomy.spider_result_eq(rows, wrong, True) is False


def test_a_search_past_its_bound_is_labelled_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    # every column alike, every row alike: only the search can tell, and it may not finish
    gold = [(1, 2, 3), (2, 3, 1), (3, 1, 2)]  # a Latin square: every column and row holds 1, 2, 3
    pred = [(1, 3, 2), (2, 1, 3), (3, 2, 1)]
    monkeypatch.setattr(taxonomy, "SPIDER_BUDGET_CELLS", 10)
    assert taxonomy.spider_result_eq(gold, pred, False) is None
    case = type("C", (), {"rows": [dict(zip("abc", r, strict=True)) for r in gold], "alt_rows": None, "sql": "", "order_matters": False})()
    answer = type("A", (), {"status": "ok", "rows": pred, "columns": list("abc"), "truncated": False})()
    miss = [type("S", (), {"name": "result_match", "passed": False})()]
    entry = taxonomy.for_item(case, answer, miss)
    assert entry["spider"] is None and entry["not_computed"] == "spider: not computed: too many column candidates"


def test_the_official_rule_still_finds_a_permutation() -> None:
    gold = [(1, "a", 2.5), (2, "b", 3.5)]
    pred = [("b", 3.5, 2), ("a", 2.5, 1)]
    assert taxonomy.spider_result_eq(gold, pred, False) is True
    assert taxonomy.spider_result_eq(gold, pred, True) is False


def test_compare_statistics_of_100000_items_answer() -> None:
    assert mcnemar_exact(50_000, 50_000) == 1.0
    assert 0.0 < mcnemar_exact(49_000, 51_000) < 1e-9
    base = [True] * 70_000 + [False] * 30_000
    new = [True] * 69_000 + [False] * 31_000
    lo, hi = paired_bootstrap_ci(base, new)
    assert lo < -0.01 < hi <= 0.0


def test_a_where_of_300_conjuncts_gives_a_bounded_set_of_mutants() -> None:
    where = " AND ".join(f"c{i} = {i}" for i in range(300))
    made = mutants(f"SELECT a FROM t WHERE {where}")
    assert 4 <= len(made) <= 40
    assert {"comparison", "where"} <= {m.kind for m in made}
