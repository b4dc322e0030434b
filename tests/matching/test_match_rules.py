"""result_match's rule (pytest_nl2sql.scoring.matching): defaults, every setting, and the Spider cases."""

from __future__ import annotations

import pytest

from pytest_nl2sql.scoring.matching import MatchRule, match_rows, rows_to_tuples

DEFAULT = MatchRule()


def m(gold, pred, rule=DEFAULT, gcols=None, pcols=None, **kw):
    gcols = gcols or tuple(f"g{i}" for i in range(len(gold[0]) if gold else 1))
    pcols = pcols or tuple(f"p{i}" for i in range(len(pred[0]) if pred else 1))
    return match_rows(gcols, gold, pcols, pred, rule, **kw)


def test_rows_compare_as_a_multiset_by_default():
    assert m([(1,), (2,)], [(2,), (1,)]).matched
    assert not m([(1,), (1,), (2,)], [(1,), (2,), (2,)]).matched


def test_duplicates_count_unless_ignored():
    gold, pred = [("a",), ("b",)], [("a",), ("a",), ("b",)]
    result = m(gold, pred)
    assert not result.matched and "3 rows, the gold has 2" in result.reason
    assert m(gold, pred, MatchRule(duplicates="ignore")).matched


def test_answer_columns_may_come_in_any_order_and_names_are_ignored():
    gold = [(1, "x", 2.5), (2, "y", 3.5)]
    pred = [("y", 3.5, 2), ("x", 2.5, 1)]
    result = m(gold, pred, gcols=("id", "name", "v"), pcols=("n", "v", "i"))
    assert result.matched and result.columns == (2, 0, 1)


def test_permutation_search_over_wide_results_with_many_rows():
    gold = [tuple(range(i, i + 8)) for i in range(3000)]
    pred = [tuple(reversed(r)) for r in gold]
    assert m(gold, pred).matched


def test_column_names_required_decide_the_alignment():
    rule = MatchRule(column_names="require")
    gold = [(1, "x")]
    assert m(gold, [("x", 1)], rule, gcols=("id", "name"), pcols=("NAME", "ID")).matched
    result = m(gold, [(1, "x")], rule, gcols=("id", "name"), pcols=("id", "title"))
    assert not result.matched and "by name" in result.reason


def test_extra_columns_forbidden_by_default_allowed_when_set():
    gold, pred = [(1,), (2,)], [(1, "a"), (2, "b")]
    result = m(gold, pred)
    assert not result.matched and "2 columns, the gold has 1" in result.reason
    assert m(gold, pred, MatchRule(extra_columns="allow")).matched
    assert not m([(1, "a")], [(1,)], MatchRule(extra_columns="allow")).matched


def test_float_tolerance_default_and_exact():
    gold, pred = [(0.1 + 0.2,), (1.0,)], [(0.3,), (1,)]
    assert m(gold, pred).matched
    assert not m(gold, pred, MatchRule(float_tolerance=0.0)).matched
    assert m([(100.0,)], [(100.5,)], MatchRule(float_tolerance=0.01)).matched
    assert not m([(100.0,)], [(102.0,)], MatchRule(float_tolerance=0.01)).matched


def test_ints_and_floats_compare_as_numbers_but_text_is_not_a_number():
    assert m([(3,)], [(3.0,)]).matched
    assert not m([(3,)], [("3",)]).matched


def test_null_equals_null_and_nothing_else():
    assert m([(None, 1)], [(None, 1)]).matched
    assert not m([(None,)], [(0,)]).matched
    assert not m([(None,)], [("",)]).matched


def test_order_matters_only_when_the_case_says_so():
    gold, pred = [(1,), (2,), (3,)], [(3,), (2,), (1,)]
    assert m(gold, pred).matched
    result = m(gold, pred, MatchRule(order_matters=True))
    assert not result.matched and "order" in result.reason
    assert m(gold, list(gold), MatchRule(order_matters=True)).matched


def test_a_truncated_answer_never_matches():
    result = m([(1,)], [(1,)], truncated=True)
    assert not result.matched and "truncated" in result.reason


def test_empty_results():
    assert m([], []).matched
    assert match_rows(("a",), [], ("a", "b"), []).matched  # no rows either way: the same answer
    assert not m([(1,)], []).matched
    assert not m([], [(1,)]).matched


def test_mismatch_lists_missing_and_unexpected_rows():
    result = m([(1,), (2,)], [(1,), (3,)])
    assert not result.matched
    assert result.missing == ((2,),) and result.unexpected == ((3,),)


def test_rule_layers_later_wins():
    rule = MatchRule.build({"duplicates": "ignore", "float_tolerance": 0.0}, {"float_tolerance": 0.5}, order_matters=True)
    assert rule == MatchRule(duplicates="ignore", float_tolerance=0.5, order_matters=True)


def test_rows_to_tuples_keeps_column_order():
    assert rows_to_tuples([{"b": 1, "a": 2}, {"a": 4, "b": 3}]) == (("b", "a"), [(1, 2), (3, 4)])
    assert rows_to_tuples([]) == ((), [])


# -- the causes found against the official Spider metric (docs/scoring.md) ------------------
def test_spider_distinct_duplicates_are_a_different_answer():
    """dev 0075: gold SELECT DISTINCT fname, age; the prediction without DISTINCT repeats
    students with two pets. The official metric deletes DISTINCT and passes it; we do not."""
    gold = [("Linda", 18), ("Tracy", 19)]
    pred = [("Linda", 18), ("Tracy", 19), ("Tracy", 19)]
    assert not m(gold, pred).matched


def test_spider_count_distinct_is_not_count():
    assert not m([(3,)], [(4,)]).matched


@pytest.mark.parametrize("order", [False, True])
def test_order_by_in_a_subquery_does_not_order_the_result(order):
    # the suite sets order_matters from the top-level ORDER BY only; a subquery's
    # ORDER BY ... LIMIT 1 picks a row, it does not order the answer
    gold, pred = [("a",), ("b",)], [("b",), ("a",)]
    assert m(gold, pred, MatchRule(order_matters=order)).matched is (not order)
