"""Comparing result rows the way a user would: same values, floats to 1e-9."""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any


def same_value(a: Any, b: Any) -> bool:
    """Equal, with floats (and int/float and Decimal/float pairs: DuckDB and PostgreSQL give a
    DECIMAL column's values as Decimals, which the adapter keeps exact) compared to a relative 1e-9."""
    if isinstance(a, float) or isinstance(b, float):
        a, b = (float(v) if isinstance(v, Decimal) else v for v in (a, b))
        if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return False
    return a == b and type(a) is type(b)


def same_rows(
    actual: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]], *, ordered: bool = True
) -> bool:
    """Whether two result sets hold the same rows (in the same order when ``ordered``)."""
    if len(actual) != len(expected):
        return False
    if not ordered:
        actual, expected = sorted(actual, key=repr), sorted(expected, key=repr)
    return all(
        len(a) == len(e) and all(same_value(x, y) for x, y in zip(a, e, strict=True))
        for a, e in zip(actual, expected, strict=True)
    )
