"""A column some role may not read lends no real value to a neighbour, not even through the
real rows the generator draws "together" columns from (a name and its code)."""

from __future__ import annotations

import random

from pytest_nl2sql.scoring.neighbourgen import ColumnSpec, TableSpec, fill, hide, together_groups

SECRETS = ("alice@corp.example", "bob@corp.example", "carol@corp.example")


def _table() -> TableSpec:
    cols = (
        ColumnSpec("id", "INTEGER", True, 1, (1, 2, 3), has_null=False, unique_real=True),
        ColumnSpec("name", "TEXT", True, 0, ("Alice", "Bob", "Carol"), has_null=False),
        ColumnSpec("email", "TEXT", True, 0, SECRETS, has_null=False),
    )
    samples = ((1, "Alice", SECRETS[0]), (2, "Bob", SECRETS[1]), (3, "Carol", SECRETS[2]))
    return TableSpec("person", "CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, email TEXT)", cols, (), (), samples)


def test_name_and_email_are_drawn_together_when_nothing_is_hidden():
    assert [1, 2] in together_groups(_table())


def test_a_hidden_column_leaves_every_together_group_and_its_values_are_gone():
    (hidden,) = hide([_table()], lambda table, column: column == "email")
    assert all(2 not in g for g in together_groups(hidden))
    written: list[list] = []
    fill([hidden], random.Random(0), lambda t, row: written.append(list(row)) or True)
    assert written, "the generator wrote no row"
    assert not {v for row in written for v in row} & set(SECRETS)
