"""The lenient reading's month labels (scoring/lenient.py): which values read as a month."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from pytest_nl2sql.scoring.lenient import _labelled, period_label

MONTHS = [
    ("2013-12-01", "2013-12"), (" 2013-12-01 ", "2013-12"), ("2013-12-01 00:00:00", "2013-12"), ("2013-12-01T00:00:00.000", "2013-12"),
    (dt.date(2013, 12, 1), "2013-12"), (dt.datetime(2013, 12, 1), "2013-12"),
]  # fmt: skip
AS_THEY_ARE = [
    "2013-12-02", "2013-12", "2013-12-01 00:00:01", "x-01", "", 1, 201312, 1.5, None, True, b"2013-12-01",
    decimal.Decimal("2013.12"), dt.date(2013, 12, 2), dt.datetime(2013, 12, 1, 1),
]  # fmt: skip


@pytest.mark.parametrize(("value", "label"), MONTHS)
def test_a_first_of_a_month_reads_as_its_label(value: Any, label: str) -> None:
    assert period_label(value) == label
    assert _labelled([(value, 7)]) == [(label, 7)]


@pytest.mark.parametrize("value", AS_THEY_ARE, ids=repr)
def test_anything_else_reads_as_it_is(value: Any) -> None:
    assert period_label(value) is value
    (row,) = _labelled([(value, None)])
    assert row[0] is value and row[1] is None
