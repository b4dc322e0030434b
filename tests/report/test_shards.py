"""Past one machine: stable shards by case id, merged shard reports equal one run, the gate on
the merged report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.cli import main
from pytest_nl2sql.reporting.shards import shard_of
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows

# figures that measure the machine, not the engine: they differ between any two runs
_TIMING = ("latency", "duration", "started")


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if not any(t in k for t in _TIMING)}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def test_a_case_s_shard_depends_only_on_its_id_and_shards_are_balanced() -> None:
    ids = [f"case_{i:04d}" for i in range(3000)]
    shards = {i: shard_of("s.yaml", i, 3) for i in ids}
    more = {i: shard_of("s.yaml", i, 3) for i in [*ids, "added_1", "added_2"]}
    assert all(more[i] == shards[i] for i in ids)  # adding cases moves no other case
    counts = [list(shards.values()).count(k) for k in (1, 2, 3)]
    assert all(900 < c < 1100 for c in counts), counts


def test_three_shards_merged_equal_one_run_and_the_gate_runs_on_the_merge(
    pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a second suite with the same case ids: a case's shard is keyed by suite and id
    (project / "evals" / "other.yaml").write_text((project / "evals" / "mini.yaml").read_text())
    update_rows(project / "evals" / "mini.yaml", {"mini_002": RowsUpdate([{"x": 1}])})
    suites = ["--nl2sql-suite", "evals/mini.yaml", "--nl2sql-suite", "evals/other.yaml", "--nl2sql-clarify"]
    pytester.runpytest(*suites, "--nl2sql-out", "all.json")
    seen: dict[tuple[str, str], int] = {}
    for i in (1, 2, 3):
        result = pytester.runpytest(*suites, "--nl2sql-shard", f"{i}/3", "--nl2sql-out", f"shard{i}.json")
        data = json.loads((project / f"shard{i}.json").read_text())
        assert data["run"]["shard"] == f"{i}/3"
        for item in data["items"]:
            assert seen.setdefault((item["suite"], item["case_id"]), i) == i  # every role of a case in one shard
        assert result.ret in (0, 1, pytest.ExitCode.NO_TESTS_COLLECTED)
    assert len(set(seen.values())) == 3  # 8 cases over 3 shards: none is empty here
    xdist = pytester.runpytest_subprocess(*suites, "--nl2sql-shard", "2/3", "--nl2sql-out", "shard2x.json", "-n", "2", "-p", "no:cacheprovider")
    assert xdist.ret in (0, 1)
    nodes = [sorted(i["nodeid"] for i in json.loads((project / n).read_text())["items"]) for n in ("shard2.json", "shard2x.json")]
    assert nodes[0] == nodes[1]  # workers pick the same shard
    capsys.readouterr()
    shards = [str(project / f"shard{i}.json") for i in (1, 2, 3)]
    assert main(["report", "merge", *shards, "-o", str(project / "merged.json"), "--html", str(project / "merged.html")]) == 0
    merged = json.loads((project / "merged.json").read_text())
    single = json.loads((project / "all.json").read_text())
    assert _strip(merged["items"]) == _strip(single["items"])
    assert _strip(merged["summary"]) == _strip(single["summary"])
    assert merged["run"]["merged_from"] == shards
    assert (project / "merged.html").read_text().startswith("<!DOCTYPE html>")
    # overlapping shards are refused
    assert main(["report", "merge", shards[0], shards[0], "-o", str(project / "x.json")]) == 2
    assert "shards must not overlap" in capsys.readouterr().err

    # the baseline gate on the merged report: new failures fail, known ones pass, stale ones only when strict
    baseline = project / "known.json"
    assert main(["report", "gate", str(project / "merged.json"), "--baseline", str(baseline)]) == 1
    assert "new failure: evals/mini.yaml::mini_002[admin]" in capsys.readouterr().out
    entries = [{"suite": "mini.yaml", "case": "mini_002", "role": r, "mode": "plans", "scorer": "result_match", "reason": "k"} for r in ("admin", "viewer")]
    stale = {"suite": "mini.yaml", "case": "gone", "role": "admin", "mode": "plans", "scorer": "result_match", "reason": "k"}
    baseline.write_text(json.dumps({"version": 2, "failures": [*entries, stale]}))
    args = ["report", "gate", str(project / "merged.json"), "--baseline", str(baseline), "--suite", str(project / "evals" / "mini.yaml")]
    assert main(args) == 0
    assert "0 new failures, 2 known failures, 0 fixed entries, 1 stale entries: ok" in capsys.readouterr().out
    assert main([*args, "--strict"]) == 1
    assert "stale: mini.yaml::gone[admin] plans result_match" in capsys.readouterr().out


def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    for bad in ("0/3", "4/3", "x", "1/0"):
        result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-shard", bad)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*--nl2sql-shard: * is not I/N with 1 <= I <= N (e.g. 2/3)"])
