"""The seven defect classes of issue 14, one test (or a few) each, against ``match_rows``."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

import pytest

from pytest_nl2sql.scoring.matching import MatchRule, answer_rows, match_rows

DEFAULT = MatchRule()


def m(gold, pred, rule=DEFAULT, gcols=None, pcols=None, **kw):
    gcols = gcols or tuple(f"g{i}" for i in range(len(gold[0]) if gold else 1))
    pcols = pcols or tuple(f"p{i}" for i in range(len(pred[0]) if pred else 1))
    return match_rows(gcols, gold, pcols, pred, rule, **kw)


# 1. integers are exact --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("gold", "pred"),
    [(1_000_000, 1_000_001), (2**53, 2**53 + 1), (99_999, 100_000), (Decimal("12.34"), Decimal("12.35"))],
)
def test_two_exact_numbers_compare_exactly(gold, pred):
    assert not m([(gold,)], [(pred,)]).matched
    assert not m([(gold,)], [(pred,)], MatchRule(float_tolerance=0.01)).matched  # a tolerance is for floats only


def test_an_id_off_by_one_in_a_large_result_fails():
    gold = [(i, f"n{i}") for i in range(100_000)]
    pred = list(gold)
    pred[50_000] = (50_001, "n50000")
    assert not m(gold, pred).matched


def test_int_and_float_compare_as_numbers():
    assert m([(3,)], [(3.0,)]).matched
    assert m([(2**53,)], [(float(2**53),)]).matched


# 2. values as drivers return them ---------------------------------------------------------
@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        (12.34, Decimal("12.34")),
        (13, Decimal("13.000")),
        ("2009-01-01", dt.date(2009, 1, 1)),
        ("2009-01-01 00:00:00", dt.datetime(2009, 1, 1)),
        ("2009-01-01T00:00:00", dt.datetime(2009, 1, 1)),
        ("2009-01-01 10:00:00", dt.datetime(2009, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
        ("2009-01-01 10:00:00+00:00", dt.datetime(2009, 1, 1, 10)),
        ("2009-01-01 10:00:00.500000", dt.datetime(2009, 1, 1, 10, 0, 0, 500000)),
        ("2009-01-01 10:00:00.5", dt.datetime(2009, 1, 1, 10, 0, 0, 500000)),
        ("13:45:00", dt.time(13, 45)),
        ("00ff", b"\x00\xff"),
        (1, True),
        (0, False),
        (None, None),
    ],
)
def test_driver_values_equal_their_storage_form(gold, pred):
    assert m([(gold,)], [(pred,)]).matched
    assert m([(pred,)], [(gold,)]).matched  # both sides are normalised


def test_values_of_different_kinds_stay_different():
    assert not m([("3",)], [(3,)]).matched  # a number is not its text
    assert not m([(None,)], [(0,)]).matched
    assert not m([(None,)], [("",)]).matched
    assert not m([("2009-01-01",)], [(dt.datetime(2009, 1, 1),)]).matched  # a date is not a datetime
    assert not m([("2009-01-01 00:00:00",)], [(dt.datetime(2009, 1, 1, 0, 0, 1),)]).matched
    assert not m([(dt.datetime(2009, 1, 1, 0, 0, 0, 1),)], [(dt.datetime(2009, 1, 1),)]).matched  # microseconds count


def test_nan_equals_nan():
    assert m([(float("nan"),)], [(float("nan"),)]).matched
    assert m([(Decimal("NaN"),)], [(float("nan"),)]).matched
    assert not m([(float("nan"),)], [(0.0,)]).matched


# 3. rows of another shape -----------------------------------------------------------------
def test_rows_as_lists_compare_like_tuples():
    gold = [(1, "a"), (2, "b")]
    assert m(gold, [[2, "b"], [1, "a"]]).matched
    assert not m(gold, [[2, "b"], [1, "c"]]).matched


def test_answer_rows_accepts_sequences_and_mappings():
    assert answer_rows([[1, 2]], ["a", "b"]) == (("a", "b"), [(1, 2)])
    assert answer_rows(([1, 2],), None) == ((), [(1, 2)])
    assert answer_rows([{"b": 1, "a": 2}], ["a", "b"]) == (("a", "b"), [(2, 1)])
    assert answer_rows(iter([(1,)]), ["x"]) == (("x",), [(1,)])
    assert answer_rows(None, ["x"]) == (("x",), [])


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([1, 2, 3], "bare value"),
        (["ab", "cd"], "bare value"),
        ("abc", "not a list of rows"),
        (42, "not a list of rows"),
        ({"a": 1}, "not a list of rows"),
        ([(1, 2), (3,)], "row 2 has 1 values, row 1 has 2"),
        ([{"a": 1}, (1,)], "not a mapping"),
    ],
)
def test_anything_else_is_a_clear_error(rows, words):
    from pytest_nl2sql.scoring.matching import RowShapeError

    with pytest.raises(RowShapeError, match=words):
        answer_rows(rows, ["a"])


def test_unhashable_cells_do_not_raise():
    assert m([("[1, 2]",)], [([1, 2],)]).matched  # an unknown value compares as its text


# 4. column alignment is a bounded bipartite matching ----------------------------------------
def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


@pytest.mark.parametrize("width", [9, 10, 11, 12, 16])
def test_a_one_row_pivot_with_one_wrong_cell_decides_at_once(width):
    gold = [tuple(range(width))]
    pred = [tuple(reversed(range(width)))]
    assert m(gold, pred).matched
    bad = list(pred[0])
    bad[3] = 999
    result, secs = _timed(lambda: m(gold, [tuple(bad)]))
    assert not result.matched and secs < 1.0


def test_ten_flag_columns_reversed_and_renamed():
    gold = [tuple((r >> c) & 1 for c in range(10)) for r in range(64)]
    pred = [tuple(reversed(r)) for r in gold]
    result, secs = _timed(lambda: m(gold, pred, gcols=tuple(f"f{i}" for i in range(10)), pcols=tuple(f"x{i}" for i in range(10))))
    assert result.matched and secs < 1.0
    wrong = list(pred)
    wrong[5] = tuple(1 - v for v in wrong[5])
    result, secs = _timed(lambda: m(gold, wrong))
    assert not result.matched and secs < 1.0


def test_identical_columns_are_interchangeable():
    gold = [(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2)] * 3
    pred = [(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)] * 3
    assert m(gold, pred).matched


def test_a_mismatch_says_why_no_arrangement_fits():
    result = m([(1, "a")], [(1, "b")])
    assert not result.matched and result.reason == "rows differ"
    assert result.missing == ((1, "a"),) and result.unexpected == ((1, "b"),)


# 5. tolerance pairing by the exact parts first ----------------------------------------------
def test_near_equal_floats_pair_by_their_exact_parts():
    gold = [(0.9900000000000018, "Rock"), (0.99, "Jazz")]
    pred = [(0.99, "Rock"), (0.9900000000000011, "Jazz")]
    assert m(gold, pred).matched
    assert m(pred, gold).matched


def test_pairing_is_a_matching_not_a_sort():
    # each gold row is close to two answer rows; only one pairing uses every row
    rule = MatchRule(abs_tol=0.15, rel_tol=0)
    gold = [(1.0,), (1.2,)]
    pred = [(1.1,), (1.3,)]
    assert m(gold, pred, rule).matched
    assert not m([(1.0,), (1.0,)], [(1.1,), (1.3,)], rule).matched


# 6. tolerance semantics -----------------------------------------------------------------------
def test_the_default_tolerance_only_absorbs_noise():
    assert m([(0.1 + 0.2,)], [(0.3,)]).matched
    assert m([(sum([0.1] * 10),)], [(1.0,)]).matched
    assert not m([(1_000_000.0,)], [(1_000_000.5,)]).matched
    assert not m([(1000.0,)], [(1004.0,)]).matched


def test_abs_tol_money_rounded_to_cents():
    rule = MatchRule(abs_tol=0.005, rel_tol=0)
    assert m([(1000.0,)], [(1000.004,)], rule).matched
    assert not m([(1000.0,)], [(1004.0,)], rule).matched
    assert not m([(1000.0,)], [(1000.01,)], rule).matched


def test_rel_tol():
    rule = MatchRule(rel_tol=0.01, abs_tol=0)
    assert m([(100.0,)], [(100.9,)], rule).matched
    assert not m([(100.0,)], [(102.0,)], rule).matched


def test_float_tolerance_is_the_older_spelling_of_both():
    assert MatchRule(float_tolerance=0.01).tolerance() == MatchRule(abs_tol=0.01, rel_tol=0.01).tolerance()
    assert not m([(0.1 + 0.2,)], [(0.3,)], MatchRule(float_tolerance=0)).matched


def test_per_column_tolerance_by_gold_column_name():
    rule = MatchRule.build({"column_tolerance": {"Total": {"abs_tol": 0.5}}})
    gold, pred = [("a", 10.0, 3.0)], [("a", 10.4, 3.0)]
    assert m(gold, pred, rule, gcols=("name", "total", "n")).matched
    assert not m([("a", 10.0, 3.0)], [("a", 10.0, 3.4)], rule, gcols=("name", "total", "n")).matched


def test_layers_suite_then_case_then_column():
    rule = MatchRule.build({"abs_tol": 0.1, "column_tolerance": {"a": {"abs_tol": 1}}}, {"rel_tol": 0.2, "column_tolerance": {"b": {"rel_tol": 0}}})
    assert rule.tolerance().abs == 0.1 and rule.tolerance().rel == 0.2
    assert rule.tolerance("A").abs == 1.0 and rule.tolerance("b").rel == 0.0
    # a later float_tolerance replaces the earlier abs_tol / rel_tol
    later = MatchRule.build({"abs_tol": 0.1}, {"float_tolerance": 0.5})
    assert later.tolerance().abs == 0.5 and later.tolerance().rel == 0.5


def test_invalid_settings_are_value_errors():
    with pytest.raises(ValueError, match="abs_tol"):
        MatchRule(abs_tol=-1)
    with pytest.raises(ValueError, match="unknown match setting"):
        MatchRule.build({"tolerance": 1})
    with pytest.raises(ValueError, match="duplicates"):
        MatchRule(duplicates="maybe")


# 7. text is compared in NFC -------------------------------------------------------------------
def test_text_compares_in_nfc():
    nfc, nfd = "Beyonc\u00e9", "Beyonce\u0301"
    assert m([(nfc,)], [(nfd,)]).matched
    assert not m([("Beyonce",)], [(nfc,)]).matched
    assert not m([("abc",)], [("ABC",)]).matched  # case counts
    assert not m([("abc",)], [("abc ",)]).matched  # spaces count
