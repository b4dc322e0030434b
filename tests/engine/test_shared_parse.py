"""The validator reads the shared parse without copying it where no rule edits it, and never
edits that parse: the next role, the guard and the next neighbour read the SQL as written
(issue 28: the copy was a fifth of a cold verdict)."""

from __future__ import annotations

import pytest
import sqlglot

from pytest_nl2sql.config.policy import RolePolicy
from pytest_nl2sql.datasources import guard
from pytest_nl2sql.engine import validator
from pytest_nl2sql.engine import validatorrules as rules
from tests.engine.test_plain_route import EVERYONE, NO_AGE, NO_CONCERTS

SCHEMA = {"singer": ["singer_id", "Name", "country", "age"], "concert": ["concert_id", "singer_id", "year"]}

#: read as parsed (folded names, nothing a rule rewrites)
AS_PARSED = [
    "select name from singer where age > 40",
    "select s.name, c.year from singer as s join concert as c on s.singer_id = c.singer_id",
    "select country from singer where singer_id in (select singer_id from concert)",
    "select country from singer intersect select country from singer where age < 30",
    "select nme from singer",  # a missing column: qualify decides, on a copy
    "select singer_id from singer, concert",  # ambiguous: qualify decides, on a copy
]
#: each needs an edit before qualify: copied first
EDITED = [
    'SELECT "Name" FROM Singer WHERE Age > 40',  # names folded
    "select * from singer",  # whole rows
    "select s.* from singer as s",
    "select count(*) from concert",
    "select rowid, name from singer",  # a rowid pseudo-column
    "select main.singer.name from main.singer",  # the own schema qualifier dropped
    "select x, y from singer as s(x, y)",  # an aliased column list
]


def _verdict(sql: str, policy: RolePolicy) -> tuple:
    v = rules.validate_now(sql, "sqlite", "sqlite", "music", SCHEMA, policy)
    return v.status, v.message, sorted(v.tables), sorted(v.columns), list(v.unknown)


@pytest.fixture(autouse=True)
def _nothing_remembered() -> None:
    validator.VERDICTS.clear()
    guard.VERDICTS.clear()
    guard.PARSES.clear()


@pytest.mark.parametrize("sql", AS_PARSED + EDITED)
def test_validating_for_every_role_leaves_the_shared_parse_as_written(sql: str) -> None:
    for policy in (EVERYONE, NO_AGE, NO_CONCERTS, EVERYONE):
        _verdict(sql, policy)
    shared = guard.parse_shared(sql, "sqlite")
    assert [t.sql("sqlite") for t in shared] == [t.sql("sqlite") for t in sqlglot.parse(sql, read="sqlite")]


@pytest.mark.parametrize("policy", [EVERYONE, NO_AGE, NO_CONCERTS], ids=["everyone", "no-age", "no-concerts"])
@pytest.mark.parametrize("sql", AS_PARSED + EDITED)
def test_reading_the_shared_parse_gives_the_copys_verdict(
    sql: str, policy: RolePolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = _verdict(sql, policy)
    guard.PARSES.clear()
    monkeypatch.setattr(rules, "_left_as_parsed", lambda census, dialect: False)  # always copy, as before
    assert _verdict(sql, policy) == shared


@pytest.mark.parametrize(("sql", "as_parsed"), [(s, True) for s in AS_PARSED] + [(s, False) for s in EDITED])
def test_only_a_tree_no_rule_edits_is_read_uncopied(sql: str, as_parsed: bool) -> None:
    census = rules._Census(guard.parse_shared(sql, "sqlite")[0])
    assert rules._left_as_parsed(census, "sqlite") is as_parsed
    assert rules._left_as_parsed(census, "postgres") is False  # other dialects: always copied


@pytest.mark.parametrize("sql", AS_PARSED + EDITED)
def test_the_parse_lists_each_trees_nodes_as_a_walk_meets_them(sql: str) -> None:
    """The guard's rules and the validator's census read this list instead of walking again:
    it must be the tree's nodes, in walk order, before and after every role's verdict."""
    parsed = guard.parse_shared(sql, "sqlite")
    walked = [[id(n) for n in tree.walk()] for tree in parsed]
    assert [[id(n) for n in nodes] for nodes in parsed.nodes] == walked
    for policy in (EVERYONE, NO_AGE, NO_CONCERTS):
        _verdict(sql, policy)
    assert guard.parse_shared(sql, "sqlite") is parsed
    assert [[id(n) for n in tree.walk()] for tree in parsed] == walked


def test_the_node_bound_counts_the_nodes_of_every_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    sql = "SELECT a FROM t; SELECT b, c FROM u"
    total = sum(1 for tree in sqlglot.parse(sql, read="sqlite") for _ in tree.walk())
    monkeypatch.setattr(guard, "MAX_SQL_NODES", total)
    assert sum(len(nodes) for nodes in guard.parse_bounded(sql, "sqlite").nodes) == total
    monkeypatch.setattr(guard, "MAX_SQL_NODES", total - 1)
    with pytest.raises(guard.StatementRefused, match=f"more than {total - 1:,} nodes"):
        guard.parse_bounded(sql, "sqlite")
