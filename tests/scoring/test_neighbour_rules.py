"""Neighbours obey the real database's rules (issue 21): a column some role may not read has
synthetic values there; the answer's SQL runs on a neighbour only after the guard and the
validator for its role, under that role's columns; a neighbour that cannot be opened is an
error said once, never "checked, passed"."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.neighbourrules import hidden_columns
from pytest_nl2sql.scoring.neighbours import (
    NeighboursUnavailable,
    disagreement,
    from_project,
    neighbours,
)

SECRETS = ("SECRET-q1w2e3", "SECRET-r4t5y6", "SECRET-u7i8o9")
SCHEMA = """
CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, secret TEXT);
""" + "".join(f"INSERT INTO customer VALUES ({i}, 'n{i}', '{s}');\n" for i, s in enumerate(SECRETS, 1))


@pytest.fixture
def project(tmp_path: Path):
    db = tmp_path / "shop.sqlite"
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    con.close()
    (tmp_path / "nl2sql.yaml").write_text(
        "version: 1\ndatasources:\n  shop:\n"
        f"    url: sqlite:///{db}\n    description: customers\n"
        "roles:\n  admin: {datasources: '*'}\n"
        "  viewer:\n    datasources: [shop]\n    deny: {columns: [shop.customer.secret]}\n"
    )
    return load_config(tmp_path / "nl2sql.yaml")


def _all_text(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


def test_a_column_some_role_may_not_read_has_no_real_value_on_any_neighbour(project, tmp_path: Path) -> None:
    db = Path(project.datasources["shop"].url.removeprefix("sqlite:///"))
    hidden = hidden_columns(project, "shop")
    assert hidden("customer", "secret") and not hidden("customer", "name")
    built = neighbours(db, 4, 0, tmp_path / "nb", hidden=hidden)
    dumps = "\n".join(_all_text(p) for p in built)
    assert not any(s in dumps for s in SECRETS), "a neighbour holds a real value of a denied column"
    assert "n1" in dumps or "n2" in dumps or "n3" in dumps  # the readable column keeps its own
    plain = "\n".join(_all_text(p) for p in neighbours(db, 4, 0, tmp_path / "plain"))
    assert any(s in plain for s in SECRETS)  # the check can see a sample at all


def test_the_answer_runs_on_neighbours_only_after_the_guard_and_validator_for_its_role(project, tmp_path: Path) -> None:
    hood = from_project(project, 2, tmp_path / "hood")
    gold = "SELECT count(*) FROM customer"
    # equals the gold on any data, but reads a column the viewer may not read
    sneaky = "SELECT count(*) FROM customer WHERE secret IS NULL OR secret IS NOT NULL OR 1 = 1"
    found = disagreement(hood, "shop", gold, sneaky, MatchRule(), role="viewer")
    assert found is not None and "not run on the neighbours" in found["reason"]
    assert disagreement(hood, "shop", gold, sneaky, MatchRule(), role="admin") is None
    # a call outside the function allow-list is not run there either, for any role
    found = disagreement(hood, "shop", gold, "SELECT count(*) FROM customer WHERE load_extension('x') IS NULL",
                         MatchRule(), role="admin")
    assert found is not None and "load_extension" in found["reason"]
    assert disagreement(hood, "shop", gold, "SELECT COUNT(id) FROM customer", MatchRule(), role="viewer") is None


def test_a_neighbour_that_cannot_be_opened_is_an_error_said_once(project, tmp_path: Path) -> None:
    hood = from_project(project, 2, tmp_path / "hood")
    built = hood.of("shop")
    assert built
    built[0].unlink()
    with pytest.raises(NeighboursUnavailable, match="cannot be opened"):
        disagreement(hood, "shop", "SELECT count(*) FROM customer", "SELECT count(*) FROM customer", MatchRule(), role="admin")
    with pytest.raises(NeighboursUnavailable, match="cannot be opened"):  # said again, never retried
        hood.of("shop")
    assert not built[0].exists()  # not re-created empty by a read
