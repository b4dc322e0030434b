"""Hypothesis properties of ``match_rows``: symmetry, permutation invariance, tolerance
monotonicity, and agreement with a brute-force oracle on small results."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_nl2sql.scoring.matching import MatchRule, match_rows
from pytest_nl2sql.suitefile.values import canonical_value

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# values that collide often: a few ints, floats one ulp apart, their Decimals, text, NULL
BASE = [0, 1, 2, 0.99, 0.9900000000000011, 1.0, 2.5, 2.5000000001, "a", "b", None, True, Decimal("2.5"), Decimal("1")]
VALUE = st.sampled_from(BASE)


@st.composite
def results(draw, max_rows=5, max_cols=4):
    width = draw(st.integers(1, max_cols))
    rows = draw(st.lists(st.tuples(*[VALUE] * width), max_size=max_rows))
    return width, rows


@st.composite
def pairs(draw):
    """A gold result and an answer: often a shuffled, column-permuted, lightly edited copy."""
    width, gold = draw(results())
    pred = list(gold)
    pred = draw(st.permutations(pred)) if pred else pred
    perm = draw(st.permutations(range(width)))
    pred = [tuple(r[j] for j in perm) for r in pred]
    if draw(st.booleans()) and pred:
        i = draw(st.integers(0, len(pred) - 1))
        j = draw(st.integers(0, width - 1))
        row = list(pred[i])
        row[j] = draw(VALUE)
        pred[i] = tuple(row)
    if draw(st.integers(0, 5)) == 0:
        pred = pred + [draw(st.tuples(*[VALUE] * width))]
    return width, gold, pred


RULES = st.builds(
    MatchRule,
    duplicates=st.sampled_from(["count", "ignore"]),
    abs_tol=st.sampled_from([None, 0.0, 1e-12, 0.6]),
    rel_tol=st.sampled_from([None, 0.0, 1e-9, 0.3]),
)


def cols(width, prefix):
    return tuple(f"{prefix}{i}" for i in range(width))


def match(gold, pred, width, rule):
    return match_rows(cols(width, "g"), gold, cols(width, "p"), pred, rule).matched


# -- the oracle ---------------------------------------------------------------------------
def _float(v):
    return type(v) is float and not math.isnan(v)


def _close(a, b, tol):
    if a is b or a == b:
        return True
    num = (int, float, Decimal)
    if tol is None or not (type(a) in num and type(b) in num):
        return False
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return False
    fa, fb = float(a), float(b)
    return abs(fa - fb) <= max(tol.abs, tol.rel * max(abs(fa), abs(fb)))


def oracle(gold, pred, width, rule):
    """Every column permutation; rows equal value by value pair first, then every pairing of
    the rest (rows as sets when duplicates are ignored). A column with a float on either side
    compares its numbers within the tolerance, any other exactly."""
    tol = rule.tolerance()
    g = [tuple(map(canonical_value, r)) for r in gold]
    p = [tuple(map(canonical_value, r)) for r in pred]
    if not g and not p:
        return True
    for perm in itertools.permutations(range(width)):
        q = [tuple(r[j] for j in perm) for r in p]
        tols = [tol if any(_float(r[i]) for r in g + q) else None for i in range(width)]

        def close(a, b, tols=tols):
            return all(_close(x, y, t) for x, y, t in zip(a, b, tols, strict=True))

        if rule.duplicates == "ignore":
            if all(any(close(a, b) for b in q) for a in g) and all(any(close(a, b) for a in g) for b in q):
                return True
            continue
        if len(g) != len(q):
            return False
        left_q = list(q)
        left_g = []
        for a in g:  # equal rows pair first
            k = next((k for k, b in enumerate(left_q) if a == b), None)
            if k is None:
                left_g.append(a)
            else:
                left_q.pop(k)
        if any(
            all(close(a, left_q[k]) for a, k in zip(left_g, order, strict=True))
            for order in itertools.permutations(range(len(left_q)))
        ):
            return True
    return False


@FAST
@given(pairs(), RULES)
def test_agrees_with_the_brute_force_oracle(pair, rule):
    width, gold, pred = pair
    assert match(gold, pred, width, rule) is oracle(gold, pred, width, rule)


@FAST
@given(pairs(), RULES)
def test_symmetric(pair, rule):
    width, gold, pred = pair
    assert match(gold, pred, width, rule) is match(pred, gold, width, rule)


@FAST
@given(pairs(), RULES, st.randoms(use_true_random=False))
def test_invariant_under_row_and_column_permutations_of_the_answer(pair, rule, rnd):
    width, gold, pred = pair
    verdict = match(gold, pred, width, rule)
    shuffled = list(pred)
    rnd.shuffle(shuffled)
    perm = list(range(width))
    rnd.shuffle(perm)
    shuffled = [tuple(r[j] for j in perm) for r in shuffled]
    assert match(gold, shuffled, width, rule) is verdict


@FAST
@given(pairs(), st.sampled_from([0.0, 1e-12, 0.01, 0.6]), st.sampled_from([0.0, 1e-9, 0.05, 0.3]), st.floats(1, 10))
def test_a_larger_tolerance_never_turns_a_match_into_a_mismatch(pair, abs_tol, rel_tol, factor):
    width, gold, pred = pair
    if match(gold, pred, width, MatchRule(abs_tol=abs_tol, rel_tol=rel_tol)):
        assert match(gold, pred, width, MatchRule(abs_tol=abs_tol * factor, rel_tol=min(rel_tol * factor, 0.9)))


@FAST
@given(results(max_rows=6, max_cols=5))
def test_a_result_matches_itself_and_its_permutations(res):
    width, rows = res
    assert match(rows, rows, width, MatchRule())
    assert match(rows, [tuple(reversed(r)) for r in reversed(rows)], width, MatchRule())
    assert match(rows, [list(r) for r in rows], width, MatchRule())
