"""--nl2sql-cache: a rerun with nothing changed asks nothing; entries are JSON, atomic, bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.cli import main as nl2sql
from pytest_nl2sql.llm.cache import ResponseCache, cache_key
from tests.full.conftest import FULL, stripped


def test_a_rerun_with_nothing_changed_makes_zero_calls(pytester: pytest.Pytester, project: Path, serve, capsys) -> None:
    server, plans = serve()
    first = pytester.runpytest_subprocess(*FULL, "--nl2sql-cache", "--nl2sql-out", "first.json")
    assert first.ret == 0 and plans.calls == 8
    second = pytester.runpytest_subprocess(*FULL, "--nl2sql-cache", "--nl2sql-out", "second.json", "-n", "2")
    assert second.ret == 0
    assert plans.calls == 8, "the rerun asked the server"
    a, b = json.loads((project / "first.json").read_text()), json.loads((project / "second.json").read_text())
    assert (a["summary"]["cache_hits"], a["summary"]["cache_misses"], a["summary"]["llm_calls"]) == (0, 8, 8)
    assert (b["summary"]["cache_hits"], b["summary"]["cache_misses"], b["summary"]["llm_calls"]) == (8, 0, 0)
    assert a["summary"]["cost_usd"] == pytest.approx(0.08) and b["summary"]["cost_usd"] == 0
    assert [i["verdict"] for i in a["items"]] == [i["verdict"] for i in b["items"]]
    second.stdout.fnmatch_lines(["  response cache: 8 hits, 0 misses"])
    folder = project / ".nl2sql-cache" / "llm"
    assert len(list(folder.glob("*/*.json"))) == 8

    assert nl2sql(["cache", "stats", "--config", str(project / "nl2sql.yaml")]) == 0
    assert "8 cached responses" in capsys.readouterr().out
    assert nl2sql(["cache", "clear", "--dir", str(folder)]) == 0
    assert "removed 8 cached responses" in capsys.readouterr().out
    pytester.runpytest_subprocess(*FULL, "--nl2sql-cache")
    assert plans.calls == 16


def test_each_attempt_of_a_repeat_is_its_own_entry(pytester: pytest.Pytester, project: Path, serve) -> None:
    server, plans = serve()
    pytester.runpytest_subprocess(*FULL, "--nl2sql-cache", "--nl2sql-repeat", "2")
    assert plans.calls == 16
    pytester.runpytest_subprocess(*FULL, "--nl2sql-cache", "--nl2sql-repeat", "2")
    assert plans.calls == 16
    pytester.runpytest_subprocess(*FULL, "--nl2sql-cache", "--nl2sql-repeat", "3", "--nl2sql-out", "r.json")
    assert plans.calls == 24  # only the third attempts were asked
    summary = json.loads((project / "r.json").read_text())["summary"]
    assert (summary["cache_hits"], summary["cache_misses"]) == (16, 8)


def test_a_cached_run_gives_the_report_of_the_run_it_replays(pytester: pytest.Pytester, project: Path, serve) -> None:
    serve()
    pytester.runpytest_subprocess(*FULL, "--nl2sql-cache", "--nl2sql-cache-dir", "c", "--nl2sql-out", "a.json")
    pytester.runpytest_subprocess(*FULL, "--nl2sql-cache", "--nl2sql-cache-dir", "c", "--nl2sql-out", "b.json")
    assert (project / "c").is_dir()
    a, b = stripped(project / "a.json"), stripped(project / "b.json")
    for report in (a, b):
        for key in ("cache_hits", "cache_misses", "llm_calls", "tokens_in", "tokens_out", "cost_usd", "cost_per_passed_usd", "steps"):
            report["summary"].pop(key)
        for item in report["items"]:
            item.pop("llm"), item.pop("cost_usd"), item.pop("steps")  # a cached plan: no tokens, no cost (its planner step says so)
    assert a == b


def test_the_key_covers_everything_that_decides_the_answer() -> None:
    base = {"base_url": "u", "model": "m", "messages": [{"role": "user", "content": "q"}],
            "response_format": {"type": "json_schema"}, "params": {}, "attempt": 0}
    keys = {cache_key(base)}
    for name, other in (("base_url", "v"), ("model", "n"), ("messages", []), ("response_format", {}),
                        ("params", {"temperature": 0.5}), ("attempt", 1)):
        keys.add(cache_key({**base, name: other}))
    assert len(keys) == 7
    assert cache_key(dict(reversed(list(base.items())))) == cache_key(base)  # canonical JSON


def test_a_broken_or_foreign_entry_is_a_miss_and_nothing_is_executed(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = cache_key({"q": 1})
    assert cache.put(key, content='{"kind": "clarify"}', model="m", usage=(3, 4))
    assert cache.get(key)["usage"] == [3, 4]
    path = next(tmp_path.glob("*/*.json"))
    for text in ("{not json", json.dumps({"format": 1, "content": 5}), "[" * 100000,
                 "\x80\x04\x95 pickle bytes"):
        path.write_bytes(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)
        assert cache.get(key) is None
    assert (cache.hits, cache.misses) == (1, 4)


def test_the_cache_is_bounded_and_evicts_the_least_recently_used(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, max_entries=10)
    keys = [cache_key({"n": i}) for i in range(12)]
    for key in keys:
        assert cache.put(key, content="{}", model="m", usage=(0, 0))
    assert cache.stats()["entries"] <= 10
    assert not cache.put(cache_key({"big": 1}), content="x" * (2 * 1024 * 1024), model="m", usage=(0, 0))
    assert not list(tmp_path.glob("*/.*.tmp"))  # no temporary file left behind
    assert cache.clear() >= 9
    assert cache.stats()["entries"] == 0
