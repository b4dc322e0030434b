"""The neighbours front door (``--nl2sql-test-suite``): every SQLite and DuckDB-free attack of
the corpus, sent as the viewer's answer to an honest gold, is never run on a neighbour as it
stands -- it is refused by the guard or the validator for the role (or fails there under the
role's authorizer) -- and no answer shows a denied value. Neighbours hold no real value of a
denied column."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.neighbours import disagreement, from_project

from .corpus import ATTACKS
from .harness import SECRET_STRINGS, Backend, _fill

GOLD = 'SELECT count(*) AS n FROM "Audit"'
LEAKS = [a for a in ATTACKS if a.is_leak and "sqlite" in a.sql and a.roles.get("viewer") == "refused"]


@pytest.fixture(scope="module")
def hood(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    backend: Backend = request.getfixturevalue("sqlite_security")
    return from_project(backend.config, 2, tmp_path_factory.mktemp("security-neighbours"))


@pytest.mark.parametrize("attack", LEAKS, ids=[a.id for a in LEAKS])
def test_a_leak_attack_is_not_run_on_the_neighbours_for_the_viewer(
    attack, hood, security_backend: Callable[[str], Backend]
) -> None:
    backend = security_backend("sqlite")
    sql = _fill(attack.sql_for("sqlite"), backend.context())
    found = disagreement(hood, "shop", GOLD, sql, MatchRule(), role="viewer")
    assert found is not None, f"{attack.id}: ran on the neighbours as the viewer and passed"
    assert not any(s in repr(found) for s in SECRET_STRINGS)


def test_the_neighbours_hold_no_real_value_of_a_denied_column(hood) -> None:
    import sqlite3

    text = []
    for path in hood.of("shop"):
        con = sqlite3.connect(path)
        try:
            text.extend(con.iterdump())
        finally:
            con.close()
    dump = "\n".join(text)
    assert "Customer" in dump
    assert not any(s in dump for s in SECRET_STRINGS)
