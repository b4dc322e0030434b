"""The per-row shortcuts of a fetch count and normalise exactly as the general code does
(issue 28): the byte budget of every row (``row_bytes`` against ``value_bytes``) and the
normal form of a row (``normalize_row`` against ``normalize_value`` per value)."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from pytest_nl2sql.datasources.budget import row_bytes, value_bytes
from pytest_nl2sql.suitefile.values import normalize_row, normalize_value


class Text(str):
    """A str subclass, as some drivers return."""


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20),
    st.binary(max_size=20), st.builds(bytearray, st.binary(max_size=8)), st.builds(Text, st.text(max_size=8)),
    st.decimals(allow_nan=False, allow_infinity=False, places=3), st.dates(), st.datetimes(),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                                                       st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                      max_leaves=12)


@given(st.one_of(st.lists(values, max_size=6).map(tuple), st.lists(values, max_size=6), values))
def test_a_rows_budget_is_the_general_count(row: object) -> None:
    assert row_bytes(row) == value_bytes(row)


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(
        (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)) or (x == y and type(x) is type(y))
        for x, y in zip(a, b, strict=True)
    )


@given(st.lists(scalars, max_size=6))
def test_a_normal_row_is_what_each_value_normalises_to(values_: list) -> None:
    for row in (tuple(values_), values_):
        assert _same(normalize_row(row), tuple(normalize_value(v) for v in row))


def test_the_shortcut_covers_what_sqlite_returns_and_nothing_else() -> None:
    plain = (1, 2.5, "x", None)
    assert normalize_row(plain) is plain  # already normal: returned as it is
    assert normalize_row((True, Decimal("2.0"), dt.date(2024, 1, 2), b"\x01")) == (1, 2, "2024-01-02", "01")
    assert row_bytes((1, "abc", None, b"\x00\x01")) == 8 + 16 + 11 + 16 + 10
