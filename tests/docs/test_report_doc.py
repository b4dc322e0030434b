"""docs/report.md describes every field a real JSON report holds, and the other outputs it
documents (junitxml properties, the GitHub step summary) are there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_nl2sql.reporting.report import wilson

from .blocks import doc_text, named_block


def _documented_fields() -> set[str]:
    return set(re.findall(r"^\| `([a-z0-9_]+)` \|", doc_text("report.md"), flags=re.M))


def test_every_field_of_a_real_report_is_documented(
    pytester: pytest.Pytester, shop_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (shop_project / "conftest.py").write_text(named_block("engine.md", "conftest.py"))
    # a known failure that now passes, so the record also carries "baseline": "fixed"
    (shop_project / "shop.baseline.json").write_text(
        json.dumps({"version": 2, "failures": [
            {"suite": "shop.yaml", "case": "shop_001", "role": "clerk", "mode": "plans", "scorer": "result_match", "reason": "old"}
        ]})
    )
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "shop.yaml", "--nl2sql-out", "out/report.json", "--junitxml", "junit.xml", "-p", "no:cacheprovider",
        "-o", "junit_family=xunit1",
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines([" fixed: shop.yaml::shop_001[clerk]"])
    data = json.loads((shop_project / "out" / "report.json").read_text())
    assert (data["schema"], data["version"]) == ("pytest-nl2sql/report", 1)

    documented = _documented_fields()
    record_keys = {k for item in data["items"] for k in item}
    score_keys = {k for item in data["items"] for s in item["scores"].values() for k in s}
    stat_keys = set(data["summary"]["accuracy"])
    undocumented = {
        "top level": set(data) - {"schema", "version", "run", "summary", "items"},
        "run": set(data["run"]) - documented,
        "summary": set(data["summary"]) - documented,
        "items": record_keys - documented,
    }
    assert not any(undocumented.values()), f"docs/report.md does not describe: {undocumented}"
    assert {"verdict", "failed_scores", "baseline"} <= record_keys
    text = doc_text("report.md")
    for key in score_keys | stat_keys:
        assert f'"{key}"' in text, f"docs/report.md does not show the {key!r} key of a score or stat"

    junit = (shop_project / "junit.xml").read_text()
    for prop in ('name="nl2sql.outcome" value="pass"', 'name="nl2sql.status" value="refused"', 'name="nl2sql.cost_usd"'):
        assert prop in junit
    assert summary.read_text().startswith("### pytest-nl2sql (plans mode)\n")


def test_the_documented_wilson_example_holds() -> None:
    low, high = wilson(3, 3)
    assert f"{low:.1%}-{high:.1%}" == "43.9%-100.0%"
    assert "`43.9%-100.0%`" in doc_text("report.md")
    assert wilson(0, 0) == (0.0, 0.0)
