"""``match: {column_order: strict}``: the answer's columns in the gold's order (nl2sql-engine's rule)."""

from __future__ import annotations

import pytest

from pytest_nl2sql.scoring.matching import match_rows
from pytest_nl2sql.scoring.rule import MatchRule

GOLD_COLS, GOLD = ("Country", "n"), [("USA", 13), ("Canada", 8), ("Brazil", 5)]
SWAPPED = [(13, "USA"), (8, "Canada"), (5, "Brazil")]


def test_any_order_is_the_default():
    assert match_rows(GOLD_COLS, GOLD, ("n", "Country"), SWAPPED).matched


def test_strict_refuses_swapped_columns_and_says_why():
    result = match_rows(GOLD_COLS, GOLD, ("n", "Country"), SWAPPED, MatchRule.build({"column_order": "strict"}))
    assert not result.matched
    assert "column_order is strict" in result.reason


def test_strict_still_ignores_names_and_row_order():
    rule = MatchRule.build({"column_order": "strict"})
    assert match_rows(GOLD_COLS, GOLD, ("a", "b"), list(reversed(GOLD)), rule).matched


def test_strict_with_extra_columns_wants_the_gold_columns_first():
    rule = MatchRule.build({"column_order": "strict", "extra_columns": "allow"})
    assert match_rows(GOLD_COLS, GOLD, ("Country", "n", "extra"), [(*r, 0) for r in GOLD], rule).matched
    assert not match_rows(GOLD_COLS, GOLD, ("extra", "Country", "n"), [(0, *r) for r in GOLD], rule).matched


def test_a_wrong_word_is_a_clear_error():
    with pytest.raises(ValueError, match="column_order must be one of any, strict"):
        MatchRule.build({"column_order": "positional"})
