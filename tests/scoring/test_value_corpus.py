"""An adversarial corpus of result pairs with PostgreSQL-driver-like values, each with the
verdict a careful reviewer gives (docs/scoring.md, "The value model")."""

from __future__ import annotations

import collections
import datetime as dt
import random
import sqlite3
import uuid
from decimal import Decimal

import pytest

from pytest_nl2sql.scoring.matching import match_rows
from pytest_nl2sql.suitefile.values import normalize_value
from pytest_nl2sql.suitefile.yamlnodes import compose, to_python
from pytest_nl2sql.suitefile.yamltext import format_row

U = uuid.UUID("a0b1c2d3-e4f5-4678-9abc-def012345678")
UTC2 = dt.timezone(dt.timedelta(hours=2))
Point = collections.namedtuple("Point", "x y")

# (name, gold rows, answer rows, verdict)
CORPUS = [
    # exact decimals (NUMERIC)
    ("numeric equal", [(Decimal("12000000.00"),)], [(Decimal("12000000.0"),)], True),
    ("numeric one cent off", [(Decimal("12000000.00"),)], [(Decimal("12000000.01"),)], False),
    ("numeric vs int", [(Decimal("42.000"),)], [(42,)], True),
    ("12-decimal rate equal", [(Decimal("0.123456789012"),)], [(Decimal("0.1234567890120"),)], True),
    ("12-decimal rate off in the last digit", [(Decimal("0.123456789012"),)], [(Decimal("0.123456789013"),)], False),
    ("numeric vs its float", [(Decimal("12.34"),)], [(12.34,)], True),
    ("numeric NaN vs float NaN", [(Decimal("NaN"),)], [(float("nan"),)], True),
    # floats
    ("float noise", [(0.1 + 0.2,)], [(0.3,)], True),
    ("float really different", [(0.3,)], [(0.31,)], False),
    # bytea
    ("bytes vs memoryview", [(b"\x01\xff",)], [(memoryview(b"\x01\xff"),)], True),
    ("bytes vs lowercase hex", [(b"\x01\xff",)], [("01ff",)], True),
    ("bytes vs uppercase hex", [(b"\x01\xff",)], [("01FF",)], True),
    ("bytes vs PostgreSQL's \\x text", [(b"\x01\xff",)], [("\\x01ff",)], True),
    ("bytes differ", [(b"\x01\xff",)], [(b"\x01\xfe",)], False),
    ("bytes vs other hex", [(b"\x01\xff",)], [("01fe",)], False),
    # time, interval
    ("'13:45' vs time(13, 45)", [("13:45",)], [(dt.time(13, 45),)], True),
    ("'13:45:00' vs time(13, 45)", [("13:45:00",)], [(dt.time(13, 45),)], True),
    ("'13:45' vs time(13, 46)", [("13:45",)], [(dt.time(13, 46),)], False),
    ("aware time vs UTC text", [(dt.time(15, 0, tzinfo=UTC2),)], [("13:00:00",)], True),
    ("interval vs seconds", [(dt.timedelta(hours=1, minutes=30),)], [(5400,)], True),
    ("interval vs other seconds", [(dt.timedelta(hours=1),)], [(3601,)], False),
    ("interval days", [(dt.timedelta(days=2),)], [(dt.timedelta(hours=48),)], True),
    # timestamps
    ("aware datetime vs UTC text", [(dt.datetime(2020, 1, 1, 12, tzinfo=UTC2),)], [("2020-01-01 10:00:00",)], True),
    ("ISO T and Z", [("2020-01-01T10:00:00Z",)], [(dt.datetime(2020, 1, 1, 10),)], True),
    ("offset with a space", [("2020-01-01 12:00:00 +02:00",)], [(dt.datetime(2020, 1, 1, 10),)], True),
    ("nanoseconds round to the nearest microsecond", [("2020-01-01T10:00:00.123456789",)], [(dt.datetime(2020, 1, 1, 10, 0, 0, 123457),)], True),
    ("nanoseconds are not truncated", [("2020-01-01T10:00:00.123456789",)], [(dt.datetime(2020, 1, 1, 10, 0, 0, 123456),)], False),
    ("rounding carries into the second", [("2020-01-01 10:00:00.9999999",)], [(dt.datetime(2020, 1, 1, 10, 0, 1),)], True),
    ("timestamp text with a trailing space", [("2020-01-01 10:00:00 ",)], [(dt.datetime(2020, 1, 1, 10),)], False),
    ("date vs midnight", [(dt.date(2020, 1, 1),)], [(dt.datetime(2020, 1, 1),)], False),
    ("microseconds count", [(dt.datetime(2020, 1, 1, 10, 0, 0, 1),)], [(dt.datetime(2020, 1, 1, 10),)], False),
    # UUID
    ("UUID vs lower text", [(U,)], [(str(U),)], True),
    ("UUID vs upper text", [(U,)], [(str(U).upper(),)], True),
    ("upper vs lower UUID text", [(str(U).upper(),)], [(str(U),)], True),
    ("other UUID", [(U,)], [(str(uuid.UUID(int=1)),)], False),
    # arrays
    ("list vs tuple", [([1, 2, 3],)], [((1, 2, 3),)], True),
    ("array order counts", [([1, 2],)], [([2, 1],)], False),
    ("array of numerics vs floats", [([Decimal("1.5"), 2],)], [([1.5, 2],)], True),
    ("array vs its JSON text", [(["a", "b"],)], [('["a", "b"]',)], True),
    ("array vs Python's str() of it", [(["a", "b"],)], [("['a', 'b']",)], False),
    ("arrays of dates", [([dt.date(2020, 1, 1)],)], [(["2020-01-01"],)], True),
    ("nested arrays", [([[1, 2], [3]],)], [(((1, 2), (3,)),)], True),
    # JSON objects
    ("dict key order", [({"a": 1, "b": 2},)], [({"b": 2, "a": 1},)], True),
    ("dict vs JSON text", [({"a": 1, "b": [1, 2]},)], [('{"b": [1, 2], "a": 1}',)], True),
    ("dict other value", [({"a": 1},)], [({"a": 2},)], False),
    ("dict extra key", [({"a": 1},)], [({"a": 1, "b": None},)], False),
    ("JSON texts with other spacing", [('{"a":1}',)], [('{"a": 1}',)], True),
    ("text that only looks like JSON", [("[draft]",)], [("[draft]",)], True),
    # rows of other shapes
    ("rows as dicts", [(1, "x")], [{"id": 1, "name": "x"}], True),
    ("rows as named tuples", [(1, 2)], [Point(1, 2)], True),
    ("rows as lists", [(1, "x")], [[1, "x"]], True),
    ("dict rows differ", [(1, "x")], [{"id": 1, "name": "y"}], False),
]


@pytest.mark.parametrize(("gold", "answer", "verdict"), [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_corpus_verdict(gold, answer, verdict):
    result = match_rows((), gold, (), answer)
    assert result.matched is verdict, result.reason


def test_sqlite_rows_are_rows():
    con = sqlite3.connect(":memory:")
    con.row_factory = sqlite3.Row
    rows = con.execute("SELECT 1 AS id, 'x' AS name UNION ALL SELECT 2, 'y'").fetchall()
    assert match_rows(("id", "name"), [(2, "y"), (1, "x")], (), rows).matched
    assert not match_rows(("id", "name"), [(2, "y"), (1, "z")], (), rows).matched


def test_exact_decimals_stay_exact_through_the_suite_file():
    row = {"total": Decimal("12000000.01"), "rate": Decimal("0.123456789012"), "n": Decimal("5.00")}
    text = format_row(row)
    back = to_python(compose("row: " + text))["row"]
    assert back == {"total": Decimal("12000000.01"), "rate": Decimal("0.123456789012"), "n": 5}
    assert type(back["total"]) is Decimal
    # the gold read back from the file fails an answer one cent off, and passes the same total
    gold = [tuple(back.values())]
    assert not match_rows((), gold, (), [(Decimal("12000000.00"), Decimal("0.123456789012"), 5)]).matched
    assert not match_rows((), gold, (), [(Decimal("12000000.01"), Decimal("0.123456789013"), 5)]).matched
    assert match_rows((), gold, (), [(Decimal("12000000.010"), Decimal("0.123456789012"), 5)]).matched


def test_storage_form_keeps_decimals_and_writes_arrays_as_json():
    assert normalize_value(Decimal("0.10")) == Decimal("0.10")
    assert type(normalize_value(Decimal("0.10"))) is Decimal
    assert normalize_value(Decimal("3.00")) == 3
    assert normalize_value([1, Decimal("1.5"), "a"]) == '[1, 1.5, "a"]'
    assert normalize_value({"a": [1]}) == '{"a": [1]}'


def test_few_distinct_floats_do_not_exhaust_the_pairing_bound():
    """A 0.0 / 1.0 flag column beside near-equal floats: equal results match (and fast)."""
    rnd = random.Random(1)
    gold = [(float(i % 2), 1.0 + (i // 2) * 1e-13, float(i)) for i in range(4000)]
    answer = [(a, b + rnd.choice([0.0, 3e-13, -3e-13]), c) for a, b, c in gold]
    rnd.shuffle(answer)
    result = match_rows((), gold, (), answer)
    assert result.matched, result.reason
    answer[0] = (answer[0][0], answer[0][1], answer[0][2] + 0.5)
    assert not match_rows((), gold, (), answer).matched


SUITE = """version: 1
cases:
- id: money
  question: What is the total?
  datasources: [db]
  status: approved
  origin: hand
  outcome: {admin: allowed}
  sql: SELECT SUM(amount) AS total, MAX(rate) AS rate FROM ledger
  rows:
  - {total: !decimal 12000000.01, rate: !decimal 0.123456789012}
"""


def test_a_suite_file_with_exact_decimals_loads_digests_and_judges_exactly():
    from pytest_nl2sql.suitefile.digest import gold_digest
    from pytest_nl2sql.suitefile.loader import parse_suite
    from pytest_nl2sql.suitefile.writer import apply_rows

    suite = parse_suite(SUITE, "money.yaml")
    (case,) = suite.cases
    assert list(case.rows) == [{"total": Decimal("12000000.01"), "rate": Decimal("0.123456789012")}]
    assert gold_digest(suite.cases) == gold_digest(parse_suite(SUITE, "money.yaml").cases)
    gold = [tuple(case.rows[0].values())]
    assert not match_rows(("total", "rate"), gold, (), [(Decimal("12000000.00"), Decimal("0.123456789012"))]).matched
    assert match_rows(("total", "rate"), gold, (), [(Decimal("12000000.010"), Decimal("0.1234567890120"))]).matched
    # the writer keeps them exact when it rewrites the rows
    from pytest_nl2sql.suitefile.writer import RowsUpdate

    new = [{"total": Decimal("12000000.02"), "rate": Decimal("0.123456789013")}]
    text = apply_rows(SUITE, {"money": RowsUpdate(rows=new)})
    assert "!decimal 12000000.02" in text
    assert list(parse_suite(text, "money.yaml").cases[0].rows) == new
