"""Comparing runs: flipped items, per-tag deltas, exact McNemar, a paired bootstrap, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.cli import main
from pytest_nl2sql.reporting.compare import compare_reports
from pytest_nl2sql.reporting.stats import mcnemar_exact, paired_bootstrap_ci
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows


def test_exact_mcnemar_is_the_two_sided_binomial_test() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)  # 0.0625: 5 flips all one way
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)


def test_the_paired_bootstrap_interval_holds_the_delta_and_is_deterministic() -> None:
    base = [True] * 60 + [False] * 40
    new = [True] * 50 + [False] * 10 + [True] * 10 + [False] * 30  # 10 regressed, 10 fixed... and then
    new[:5] = [False] * 5  # 5 more regressed: delta -5%
    lo, hi = paired_bootstrap_ci(base, new)
    assert lo < -0.05 < hi and lo < 0
    assert paired_bootstrap_ci(base, new) == (lo, hi)
    assert paired_bootstrap_ci(base, base) == (0.0, 0.0)


def _rec(node: str, verdict: str, tags: list[str]) -> dict:
    suite, _, rest = node.partition("::")
    case, _, role = rest.rstrip("]").partition("[")
    return {"nodeid": node, "suite": suite, "case_id": case, "role": role, "verdict": verdict, "tags": tags, "scores": {}}


def _report(records: list[dict]) -> dict:
    return {"schema": "pytest-nl2sql/report", "version": 1, "run": {"mode": "plans"}, "summary": {}, "items": records}


def test_flips_deltas_and_what_is_not_compared() -> None:
    base = _report([_rec("s.yaml::a[x]", "passed", ["t"]), _rec("s.yaml::b[x]", "failed", ["t"]), _rec("s.yaml::c[x]", "xfailed", ["u"]),
                    _rec("s.yaml::gone[x]", "passed", [])])
    new = _report([_rec("s.yaml::a[x]", "failed", ["t"]), _rec("s.yaml::b[x]", "passed", ["t"]), _rec("s.yaml::c[x]", "passed", ["u"]),
                   _rec("s.yaml::new[x]", "passed", [])])
    c = compare_reports(base, new)
    assert c.shared == 3 and c.regressed == ("s.yaml::a[x]",) and c.fixed == ("s.yaml::b[x]", "s.yaml::c[x]")
    assert c.only_base == ("s.yaml::gone[x]",) and c.only_new == ("s.yaml::new[x]",)
    assert c.by_tag["t"] == {"total": 2, "base": 0.5, "new": 0.5, "delta": 0.0}
    assert c.by_tag["u"]["delta"] == 1.0
    assert c.exit_code() == 1 and c.exit_code(allow_regressions=1) == 0
    assert c.exit_code(max_p=0.05) == 0  # 1 regressed vs 2 fixed is no evidence of a drop (p = 1)


def _break_the_plan(project: Path) -> None:
    suite = project / "evals" / "mini.yaml"
    text = suite.read_text()
    assert "{expr: {count: t.TrackId}, alias: tracks}" in text
    suite.write_text(text.replace("{expr: {count: t.TrackId}, alias: tracks}", "{expr: {max: t.TrackId}, alias: tracks}"))


def test_a_changed_case_is_listed_apart_not_as_a_regression(pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _run(pytester, "base.json")
    update_rows(project / "evals" / "mini.yaml", {"mini_002": RowsUpdate([{"x": 1}])})  # the gold changed
    suite = project / "evals" / "mini.yaml"
    suite.write_text(suite.read_text().replace("outcome: {admin: allowed, viewer: allowed}\n  tables: [Track, MediaType]",
                                               "outcome: {admin: allowed, viewer: refused}\n  tables: [Track, MediaType]"))
    new = _run(pytester, "new.json")
    capsys.readouterr()
    assert main(["report", "compare", str(base), str(new)]) == 0  # nothing the engine did
    out = capsys.readouterr().out
    assert "0 regressed, 0 fixed, 2 case changed (not compared)" in out
    assert "case changed: evals/mini.yaml::mini_002[admin] (gold changed)" in out
    assert "case changed: evals/mini.yaml::mini_002[viewer] (expected allowed -> refused)" in out
    assert "regressed:" not in out


def _run(pytester: pytest.Pytester, out: str) -> Path:
    pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-out", out)
    return pytester.path / out


def test_nl2sql_report_compare_and_the_pytest_option(pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _run(pytester, "base.json")
    _break_the_plan(project)  # the engine now answers mini_002 wrongly; its case is unchanged
    new = _run(pytester, "new.json")
    capsys.readouterr()
    assert main(["report", "compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert "7 shared items, 2 regressed, 0 fixed" in out
    assert "regressed: evals/mini.yaml::mini_002[admin]" in out and "exact McNemar p = 0.5" in out
    assert "join" in out  # the per-tag delta of mini_002's tags
    assert main(["report", "compare", str(base), str(new), "--allow-regressions", "2"]) == 0
    assert main(["report", "compare", str(base), str(new), "--max-p", "0.05"]) == 0
    assert main(["report", "compare", str(new), str(base)]) == 0  # the other way round: 2 fixed
    (project / "junk.json").write_text("{}")
    assert main(["report", "compare", str(base), str(project / "junk.json")]) == 2
    assert "not a pytest-nl2sql report" in capsys.readouterr().err

    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-compare", str(base))
    result.stdout.fnmatch_lines([" compare *base.json -> this run: 7 shared items, 2 regressed, 0 fixed", "*regressed: evals/mini.yaml::mini_002?admin?"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = json.loads(base.read_text())
    assert data["summary"]["failed"] == 0
