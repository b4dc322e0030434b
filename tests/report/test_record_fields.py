"""Fields of an item's record that are computed on a faster path than the general one must
read exactly as the general one would (reporting/report.py, scoring/scorers.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_nl2sql.safetext import plain
from pytest_nl2sql.scoring.rule import MatchRule
from pytest_nl2sql.scoring.scorers import match_rule
from pytest_nl2sql.suitefile.digest import role_digest as _gold_digest
from pytest_nl2sql.suitefile.model import Outcome


def _digest_by_plain(case: Any, role: str) -> str:
    """The gold digest as reporting/report.py first computed it (every value through ``plain``)."""
    def rows(rs: Any) -> Any:
        return None if rs is None else [[plain(v) for v in (r.values() if isinstance(r, Mapping) else r)] for r in rs]

    content = {
        "expected": case.outcome[role].value,
        "sql": case.sql,
        "rows": rows(case.rows),
        "alt_sql": list(case.alt_sql),
        "alt_rows": [rows(r) for r in case.alt_rows],
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:16]


class _Text(str):
    def __str__(self) -> str:
        return "shown otherwise"


VALUES = [
    "text", "", 0, 1, -7, 2**63, 2**64 + 1, -(2**70), 10**5000, -(10**5000), 1.5, float("nan"), float("inf"), True, False, None,
    decimal.Decimal("1.10"), dt.date(2024, 1, 2), b"\x00\xff", _Text("x"), [1, 2], (3, "a"),
]  # fmt: skip


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_the_gold_digest_reads_every_value_as_plain_does(value: Any) -> None:
    case = SimpleNamespace(
        outcome={"admin": Outcome.ALLOWED}, sql="SELECT 1",
        rows=({"a": value, "b": 1}, {"a": "x", "b": value}), alt_sql=("SELECT 2",), alt_rows=(((value, None),),),
    )  # fmt: skip
    assert _gold_digest(case, "admin") == _digest_by_plain(case, "admin")


@pytest.mark.parametrize("order_matters", [False, True])
@pytest.mark.parametrize(("suite_match", "case_match"), [(None, None), ({}, None), (None, {}), ({"column_names": "require"}, None), (None, {"rel_tol": 0.1})])
def test_the_match_rule_is_the_one_build_gives(suite_match: Any, case_match: Any, order_matters: bool) -> None:
    assert match_rule(suite_match, case_match, order_matters) == MatchRule.build(suite_match, case_match, order_matters=order_matters)


def test_a_match_setting_that_is_not_valid_is_still_an_error() -> None:
    with pytest.raises(ValueError, match="unknown match setting"):
        match_rule({"no_such": 1}, None, False)


SUITE = """\
version: 1
cases:
- id: c1
  question: How many?
  datasources: [db]
  status: approved
  origin: hand
  outcome: {admin: allowed, viewer: refused}
  sql: SELECT COUNT(*) AS n FROM t
  rows:
  - {n: ROWS}
"""


def _case(tmp_path: Any, rows: int) -> Any:
    from pytest_nl2sql.suitefile.loader import load_suite

    path = tmp_path / "s.yaml"
    path.write_text(SUITE.replace("ROWS", str(rows)))
    (case,) = load_suite(path, write_cache=False).cases
    return case


def test_the_gold_digest_of_a_case_is_its_own_per_role_and_an_edited_case_is_hashed_again(tmp_path: Any) -> None:
    from pytest_nl2sql.suitefile.digest import _DIGESTS, gold_digest_of

    case = _case(tmp_path, 3)
    admin, viewer = gold_digest_of(case, "admin"), gold_digest_of(case, "viewer")
    assert (admin, viewer) == (_gold_digest(case, "admin"), _gold_digest(case, "viewer")) and admin != viewer
    assert gold_digest_of(case, "admin") == admin  # remembered
    edited = _case(tmp_path, 4)  # the suite edited and read again: another case, another digest
    assert gold_digest_of(edited, "admin") == _gold_digest(edited, "admin") != admin
    key = id(case)
    del case
    import gc

    gc.collect()
    assert key not in _DIGESTS  # a case's entry goes with it


def test_a_case_that_is_not_a_suite_s_is_hashed_each_time() -> None:
    from pytest_nl2sql.suitefile.digest import gold_digest_of

    case = SimpleNamespace(outcome={"admin": Outcome.ALLOWED}, sql="SELECT 1", rows=({"a": 1},), alt_sql=(), alt_rows=())
    first = gold_digest_of(case, "admin")
    case.rows = ({"a": 2},)  # a mutable stand-in: never remembered
    assert gold_digest_of(case, "admin") == _gold_digest(case, "admin") != first


def test_a_suite_case_holding_a_value_no_suite_file_holds_still_gets_its_gold_digest(tmp_path: Any) -> None:
    """A case made in code may hold what no suite file does (a date): its gold digest is hashed
    each time as before (the case digest refuses it, as it always did)."""
    import attrs

    from pytest_nl2sql.suitefile.digest import case_digest, gold_digest_of

    case = attrs.evolve(_case(tmp_path, 3), rows=({"a": dt.date(2024, 1, 2)},))
    assert gold_digest_of(case, "admin") == _gold_digest(case, "admin")
    with pytest.raises(TypeError):
        case_digest(case)
