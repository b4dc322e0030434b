"""The validator's plain route (engine/plainscope.py ``resolve_plain``) gives the verdict the
``qualify`` route gives, and is taken by the branches of a set operation (issue 28)."""

from __future__ import annotations

import pytest

from pytest_nl2sql.config.policy import RolePolicy
from pytest_nl2sql.engine import validatorrules as rules

SCHEMA = {"singer": ["singer_id", "name", "country", "age"], "concert": ["concert_id", "singer_id", "year"]}
EVERYONE = RolePolicy("analyst", datasources=frozenset({"music"}))
NO_AGE = RolePolicy("support", datasources=frozenset({"music"}), deny_columns=frozenset({("music", "singer", "age")}))
NO_CONCERTS = RolePolicy("support", datasources=frozenset({"music"}), deny_tables=frozenset({("music", "concert")}))

QUERIES = [
    "SELECT country FROM singer WHERE age > 40 INTERSECT SELECT country FROM singer WHERE age < 30",
    "SELECT name FROM singer UNION SELECT name FROM singer AS s JOIN concert AS c ON s.singer_id = c.singer_id",
    "SELECT name FROM singer EXCEPT SELECT s.name FROM singer AS s WHERE s.country = 'France'",
    "SELECT country FROM singer UNION ALL SELECT year FROM concert UNION SELECT name FROM singer",
    "SELECT name FROM singer INTERSECT SELECT nme FROM singer",  # a missing column
    "SELECT singer_id FROM singer INTERSECT SELECT singer_id FROM singer, concert",  # ambiguous
]


def _verdict(sql: str, policy: RolePolicy) -> tuple:
    v = rules.validate_now(sql, "sqlite", "sqlite", "music", SCHEMA, policy)
    return v.status, v.message, sorted(v.tables), sorted(v.columns), list(v.unknown)


@pytest.mark.parametrize("policy", [EVERYONE, NO_AGE, NO_CONCERTS], ids=["everyone", "no-age", "no-concerts"])
@pytest.mark.parametrize("sql", QUERIES)
def test_both_routes_give_one_verdict(sql: str, policy: RolePolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _verdict(sql, policy)
    monkeypatch.setattr(rules, "resolve_plain", lambda scopes, known: None)  # qualify decides every query
    assert _verdict(sql, policy) == plain


def test_a_set_operation_of_plain_selects_takes_the_plain_route(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[bool] = []
    real = rules.resolve_plain

    def spy(scopes, known):  # type: ignore[no-untyped-def]
        found = real(scopes, known)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(rules, "resolve_plain", spy)
    assert _verdict(QUERIES[0], EVERYONE)[0] == "ok"
    assert _verdict(QUERIES[0], NO_AGE)[0] == "refused"
    assert taken == [True, True]
