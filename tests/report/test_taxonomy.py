"""The failure taxonomy of result_match misses, and the BIRD and Spider verdicts per miss."""

from __future__ import annotations

import pytest

from pytest_nl2sql.reporting.taxonomy import bird_set_match, classify, spider_result_eq

GOLD = [("USA", 13), ("Canada", 8), ("Brazil", 5)]


@pytest.mark.parametrize(
    ("pred", "order_matters", "kind"),
    [
        ([("USA",), ("Canada",), ("Brazil",)], False, "column_count"),
        ([], False, "empty_vs_nonempty"),
        ([("Canada", 8), ("USA", 13), ("Brazil", 5)], True, "order_only"),
        ([("USA", 13), ("USA", 13), ("Canada", 8), ("Brazil", 5)], False, "duplicates_only"),
        ([("usa ", "13"), ("Canada", 8), ("Brazil", 5)], False, "value_format"),
        ([("USA", 13), ("Canada", 8)], False, "missing_rows"),
        ([("USA", 13), ("Canada", 8), ("Brazil", 5), ("Chile", 1)], False, "extra_rows"),
        ([(13, "USA"), (8, "Canada"), (5, "Brazil")], False, None),  # a column permutation is no miss
    ],
)
def test_each_kind_of_miss_is_named(pred, order_matters, kind) -> None:
    kinds = classify(GOLD, pred, order_matters=order_matters)["kinds"]
    assert (kinds[0] if kinds else None) == kind


def test_float_only_and_truncated() -> None:
    gold = [("a", 0.333333), ("b", 2.5)]
    assert classify(gold, [("a", 0.33), ("b", 2.5)])["kinds"] == ["float_only"]
    assert classify(gold, [("a", 0.5), ("b", 2.5)])["kinds"] == ["missing_rows", "extra_rows"]
    assert classify(gold, gold, truncated=True)["kinds"][0] == "truncated"


def test_a_midnight_timestamp_is_a_format_difference_of_its_date() -> None:
    assert classify([("2009-01-01",)], [("2009-01-01 00:00:00",)])["kinds"] == ["value_format"]


def test_bird_set_rule_ignores_duplicates_and_order_but_not_column_order() -> None:
    assert bird_set_match(GOLD, [*GOLD, GOLD[0]])
    assert bird_set_match(GOLD, list(reversed(GOLD)))
    assert not bird_set_match(GOLD, [(n, c) for c, n in GOLD])


def test_spider_rule_counts_duplicates_and_permutes_columns() -> None:
    assert spider_result_eq(GOLD, [(n, c) for c, n in GOLD], order_matters=False)
    assert not spider_result_eq(GOLD, [*GOLD, GOLD[0]], order_matters=False)
    assert not spider_result_eq(GOLD, list(reversed(GOLD)), order_matters=True)
    assert spider_result_eq(GOLD, list(reversed(GOLD)), order_matters=False)
    assert not spider_result_eq([(0.30000000000000004,)], [(0.3,)], order_matters=False)  # no float tolerance
