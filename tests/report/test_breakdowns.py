"""Honest reports: breakdowns show only what the mode checked, routing per group covers routing
cases, the outcome confusion matrix and the leak rate (and its gate), the miss taxonomy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows


def _summary(project: Path, name: str = "out.json") -> dict:
    return json.loads((project / name).read_text())["summary"]


def test_routing_breakdowns_cover_routing_cases_in_mode_retrieval(pytester: pytest.Pytester, project: Path) -> None:
    from tests.plugin.conftest import ROUTING_SUITE

    (project / "evals" / "routes.yaml").write_text(ROUTING_SUITE)
    result = pytester.runpytest("--nl2sql-suite", "evals/routes.yaml", "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-mode", "retrieval", "--nl2sql-out", "out.json")
    s = _summary(project)
    assert s["checked"] == ["routing"]
    # the three routing cases count in routing per tag/datasource; answer-only groups would miss them
    assert s["routing_by_tag"]["support"]["total"] == 1
    assert s["routing_by_datasource"]["chinook"]["total"] == 1 + 7  # route_002 and the 7 mini items
    assert s["routing_by_role"]["admin"]["total"] == 3 + 3
    # refusals are not checked in mode retrieval: no per-outcome breakdown, no confusion matrix
    assert s["by_outcome"] == {}
    assert s["confusion"]["all"] == {} and s["leak"]["should_refuse"] == 0
    text = result.stdout.str()
    assert " per outcome" not in text and "refused " not in text
    result.stdout.fnmatch_lines([" routing per tag (every item routing scored):", "  support * (1/1, *"])


def test_confusion_matrix_and_leak_rate_with_its_gate(pytester: pytest.Pytester, project: Path) -> None:
    suite = project / "evals" / "mini.yaml"
    # the engine lets the viewer see track counts; the suite now says it should refuse: a leak
    suite.write_text(suite.read_text().replace("outcome: {admin: allowed, viewer: allowed}", "outcome: {admin: allowed, viewer: refused}"))
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-out", "out.json")
    s = _summary(project)
    assert s["confusion"]["by_role"]["viewer"]["refused"] == {"answered": 1, "refused": 1}
    assert s["confusion"]["all"]["allowed"] == {"answered": 3}
    leak = s["leak"]
    assert (leak["leaked"], leak["should_refuse"], leak["rate"]) == (1, 2, 0.5)
    assert leak["items"] == ["evals/mini.yaml::mini_002[viewer]"]
    assert 0.9 < leak["upper95"] < 1.0  # Wilson: 1/2 is anything from 9.5% to 90.5%
    result.stdout.fnmatch_lines([" leak rate (answered, should be refused): 50.0% (1/2, 95% upper bound 90.5%)"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the leaking item fails its outcome anyway
    gated = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-max-leak-rate", "0.5", "-k", "not mini_002")
    gated.stdout.fnmatch_lines([" leak gate FAILED: leak rate 0.0% (0/1 *upper bound 79.3% is above --nl2sql-max-leak-rate 50.0%"])
    assert gated.ret == pytest.ExitCode.TESTS_FAILED  # every item passed, but 1 refusal shows nothing
    ok = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-max-leak-rate", "0.8", "-k", "not mini_002")
    assert ok.ret == 0
    ok.stdout.fnmatch_lines([" leak gate ok: 95% upper bound 79.3% <= 80.0%"])


def test_a_bad_max_leak_rate_is_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-max-leak-rate", "5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--nl2sql-max-leak-rate must be between 0 and 1"])


def test_each_result_match_miss_has_a_kind_and_the_bird_and_spider_verdicts(pytester: pytest.Pytester, project: Path) -> None:
    # the gold of mini_001 with one country twice: the answer has the same distinct rows
    from pytest_nl2sql.suitefile.loader import load_suite

    rows = [dict(r) for r in load_suite(project / "evals" / "mini.yaml").get("mini_001").rows]
    update_rows(project / "evals" / "mini.yaml", {"mini_001": RowsUpdate([*rows, rows[0]]), "mini_002": RowsUpdate([{"x": 1}])})
    pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-out", "out.json")
    data = json.loads((project / "out.json").read_text())
    items = {i["nodeid"]: i for i in data["items"]}
    dup = items["evals/mini.yaml::mini_001[admin]"]["taxonomy"]
    assert dup["kinds"] == ["duplicates_only"] and dup["bird_set"] is True and dup["spider"] is False
    width = items["evals/mini.yaml::mini_002[admin]"]["taxonomy"]
    assert width["kinds"] == ["column_count"] and not width["bird_set"] and not width["spider"]
    assert items["evals/mini.yaml::mini_003[admin]"]["taxonomy"] is None  # no result_match miss
    tax = data["summary"]["taxonomy"]
    assert tax["kinds"] == {"column_count": 2, "duplicates_only": 2} and tax["bird_set_would_pass"] == 2
