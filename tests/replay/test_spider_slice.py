"""A slice of the Spider conversion and the agreement with the official metric (shared data)."""

from __future__ import annotations

import json

import pytest

from benchmarks.spider.agreement import (
    CAUSE_TEXT,
    Pair,
    classify,
    our_inprocess_verdicts,
    read_multiturn,
)
from benchmarks.spider.convert import convert, db_path, default_spider_dir, write_predictions
from benchmarks.spider.official import official_exec_match
from pytest_nl2sql.suitefile.loader import load_suite

SPIDER = default_spider_dir()
pytestmark = pytest.mark.skipif(not (SPIDER / "dev.json").is_file(), reason=f"the Spider data is not at {SPIDER}")

DBS = ["concert_singer", "pets_1"]


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("spider")
    return out, convert(SPIDER, out, db_ids=DBS, limit=40)


def test_the_slice_loads_with_spider_fields(converted) -> None:
    out, conv = converted
    suite = load_suite(conv.suite)
    assert len(suite.cases) == 40 and not conv.drafts
    first = suite.get("spider_dev_0000")
    assert first.rows == ({"count(*)": 6},) and first.difficulty.value == "easy"
    assert first.tags == ("concert_singer", "spider-easy")
    ordered = suite.get("spider_dev_0002")  # ... ORDER BY age DESC
    assert ordered.order_matters and ordered.rows
    extra = [c for c in suite.cases if "spider-extra" in c.tags]
    assert extra and all(c.difficulty.value == "hard" for c in extra)


def test_the_slice_runs_under_xdist_and_agrees_with_the_official_metric(converted, pytester: pytest.Pytester) -> None:
    out, conv = converted
    predicted = (SPIDER / "predictions" / "C3SQL" / "predicted_sql.txt").read_text().splitlines()
    write_predictions(conv.items, predicted, out / "p.jsonl")
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", str(conv.suite), "--nl2sql-config", str(conv.config), "--nl2sql-predictions", str(out / "p.jsonl"),
        "-n", "2", "--nl2sql-out", str(out / "r.json"), "-p", "no:cacheprovider",
    )
    items = {i["case_id"]: i for i in json.loads((out / "r.json").read_text())["items"]}
    assert len(items) == 40 and result.ret in (0, 1)
    for it in conv.items:
        ours = bool(items[it.case_id]["scores"].get("result_match", {}).get("passed"))
        official = official_exec_match(db_path(SPIDER, it.db_id), it.gold, predicted[it.index])
        if ours != official.matched:
            pair = Pair(it.case_id, it.db_id, it.gold, predicted[it.index], ours, official.matched, official=official, spider_dir=SPIDER)
            assert classify(pair) == "distinct-removed", pair  # the one deliberate difference
            assert CAUSE_TEXT["distinct-removed"][0] == "ours"


def test_test_suite_pairs_with_bad_gold_give_a_per_case_error() -> None:
    folder = SPIDER / "test-suite-sql-eval"
    raw = read_multiturn(folder / "gold.txt", folder / "predict.txt")
    assert len(raw) == 322
    bad = [r for r in raw if "! =" in r[2]]
    assert len(bad) == 3
    pairs = our_inprocess_verdicts(SPIDER, bad + raw[:5])
    assert len(pairs) == 8
    for p in pairs[:3]:
        assert p.ours is False and p.our_error.startswith("gold SQL fails on SQLite")
