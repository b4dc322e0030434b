"""sqlglot is imported only when a verdict must be computed: the fronts of the guard, the
validator, the compiler and the replay engine import none, a verdict (or a plan's SQL) read
from the store imports none, and the verdict computed afresh (after the lazy import) is the
remembered one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CASES = """
from pytest_nl2sql.config.policy import RolePolicy

SCHEMA = {"Customer": ["CustomerId", "Name", "Email", "City"], "Invoice": ["InvoiceId", "CustomerId", "Total"]}
ADMIN = RolePolicy(name="admin")
VIEWER = RolePolicy(name="viewer", deny_columns=frozenset({("shop", "customer", "email")}))
GUARD = [
    ("SELECT Name FROM Customer", "sqlite"), ("DELETE FROM Customer", "sqlite"),
    ("SELECT 1; DROP TABLE Customer", "postgresql"), ("SELECT pg_read_file('x')", "postgresql"),
    ("SELEC Name FROM", "sqlite"), ("SELECT * FROM read_csv('x.csv')", "duckdb"),
    ("SELECT Name FROM Customer FOR UPDATE", "postgresql"), ("SELECT printf('%*d', 5, 1)", "sqlite"),
]
VALIDATE = [
    (sql, dialect, policy)
    for sql in ("SELECT Name FROM Customer", "SELECT Email FROM Customer", "SELECT c.* FROM Customer c",
                "SELECT Nope FROM Customer", "SELECT rowid FROM Customer", "SELECT Name FROM Customer WHERE City = \\"Paris\\"",
                "SELECT c.Name, SUM(i.Total) FROM Customer c JOIN Invoice i USING (CustomerId) GROUP BY 1",
                "DELETE FROM Customer")
    for dialect in ("sqlite", "postgresql")
    for policy in (ADMIN, VIEWER)
]
PLANS = [
    {"datasource": "shop", "from": "Customer", "select": ["Name"], "where": {"eq": ["City", {"value": "Paris"}]}},
    {"datasource": "shop", "from": "Invoice", "select": ["CustomerId", {"expr": {"sum": "Total"}, "alias": "spent"}],
     "group_by": ["CustomerId"], "order_by": [{"expr": "spent", "desc": True}], "limit": 3},
    {"datasource": "shop", "from": "Customer", "select": [{"expr": {"sql": "upper(Name)"}, "alias": "n"}]},
]
FALLBACK = ['SELECT Name FROM Customer WHERE City = "Paris"', 'SELECT "Name" FROM Customer', "SELECT (", 'SELECT "rowid" FROM Customer']


def verdicts():
    from pytest_nl2sql.datasources.guard import StatementRefused, check_statement
    from pytest_nl2sql.engine.replay import sqlite_string_fallback
    from pytest_nl2sql.engine.validator import validate_sql

    out = []
    for sql, dialect in GUARD:
        try:
            check_statement(sql, dialect)
            out.append(["guard", sql, dialect, None])
        except StatementRefused as refusal:
            out.append(["guard", sql, dialect, type(refusal).__name__, refusal.reason])
    for sql, dialect, policy in VALIDATE:
        v = validate_sql(sql, dialect=dialect, datasource="shop", schema=SCHEMA, policy=policy)
        out.append(["validator", sql, dialect, policy.name, v.ok, v.status, v.message, sorted(v.tables), sorted(v.columns), list(v.unknown)])
    for sql in FALLBACK:
        out.append(["fallback", sql, sqlite_string_fallback(sql, [c for cols in SCHEMA.values() for c in cols])])
    from pytest_nl2sql.engine.compiler import compile_plan
    from pytest_nl2sql.engine.plan import PlanModel

    for plan in PLANS:
        for dialect in ("sqlite", "postgresql", "duckdb"):
            out.append(["compile", dialect, compile_plan(PlanModel.from_dict(plan), dialect)])
    return out
"""

COLD = CASES + """
import json, sys
from pathlib import Path
from pytest_nl2sql.datasources.memo import STORE

STORE.enable(Path(sys.argv[1]))
computed = verdicts()
assert "sqlglot" in sys.modules
STORE.flush()
print(json.dumps(computed))
"""

WARM = CASES + """
import json, sys
from pathlib import Path
from pytest_nl2sql.datasources import guard
from pytest_nl2sql.datasources.memo import STORE
from pytest_nl2sql.engine import compiler, stringfallback, validator

STORE.enable(Path(sys.argv[1]))
remembered = verdicts()
imported_when_remembered = "sqlglot" in sys.modules
STORE.enable(None)  # now compute every verdict afresh: sqlglot is imported on the first miss
guard.VERDICTS.clear()
validator.VERDICTS.clear()
compiler.COMPILED.clear()
stringfallback.FALLBACKS.clear()
computed = verdicts()
print(json.dumps({"remembered": remembered, "computed": computed, "imported_when_remembered": imported_when_remembered,
                  "imported_after": "sqlglot" in sys.modules, "hits": STORE.hits}))
"""


def _python(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_fronts_import_no_sqlglot() -> None:
    out = _python(
        "import sys\n"
        "import pytest_nl2sql.datasources, pytest_nl2sql.datasources.guard, pytest_nl2sql.engine.validator\n"
        "import pytest_nl2sql.engine.compiler, pytest_nl2sql.engine.replay, pytest_nl2sql.engine.resolver\n"
        "from pytest_nl2sql.datasources.memo import STORE, _code_digest\n"
        "_code_digest()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sqlglot'))\n"
    )
    assert out.strip() == "[]"


def test_a_verdict_computed_after_the_lazy_import_is_the_remembered_one(tmp_path: Path) -> None:
    cold = json.loads(_python(COLD, str(tmp_path)))
    warm = json.loads(_python(WARM, str(tmp_path)))
    assert warm["imported_when_remembered"] is False  # every verdict came from the store
    assert warm["imported_after"] is True
    assert warm["remembered"] == warm["computed"] == cold
    kinds = {v[0] for v in cold}
    assert kinds == {"guard", "validator", "fallback", "compile"}
    assert len([v for v in cold if v[0] == "compile"]) == 9  # three plans in three dialects
    assert len({v[2] for v in cold if v[0] == "compile"}) == 4  # NULLS LAST spelled out where needed
    assert any(v[0] == "fallback" and v[2] for v in cold)  # one fallback rewrote its SQL
    assert {v[3] for v in cold if v[0] == "guard"} >= {None, "StatementRefused", "StatementUnparseable"}
    assert {v[5] for v in cold if v[0] == "validator"} == {"ok", "refused", "unknown_reference", "invalid"}


def test_moved_names_still_read_from_their_old_modules() -> None:
    # by name, not identity: a pytester test may drop modules from sys.modules and so have
    # one module imported twice in this process
    from pytest_nl2sql.datasources import guard
    from pytest_nl2sql.datasources.memo import Memo
    from pytest_nl2sql.engine import compiler, validator

    assert guard.resolve_function.__module__ == "pytest_nl2sql.datasources.guardrules"
    assert isinstance(guard.PARSES, Memo) and guard.PARSES.size == 32
    assert isinstance(validator.SQLGLOT_SCHEMAS, Memo)
    assert compiler.CompileError.__module__ == "pytest_nl2sql.engine.dialects"
    assert compiler.sqlglot_dialect("PostgreSQL") == "postgres"
