"""The table functions a query may call in ``FROM`` on a role's path: value makers whose
arguments read nothing. The validator (``engine/validator.py``) sees each one as a derived
table of NULLs with the function's output names, so it reads no table; any other table
function stays a table function, and the validator refuses it."""

from __future__ import annotations

from sqlglot import exp

from pytest_nl2sql.datasources.guardrules import resolve_function

__all__ = ["SAFE_TABLE_FUNCTIONS", "safe_table_functions"]

#: Table functions a query may call in FROM, per database, when their arguments read no column
#: (no column, subquery or row): they make values and read no table.
SAFE_TABLE_FUNCTIONS: dict[str, frozenset[str]] = {
    "postgresql": frozenset({"generate_series", "unnest"}),
    "duckdb": frozenset({"range", "generate_series", "unnest"}),
}


def safe_table_functions(tree: exp.Expression, sql: str, dialect: str) -> bool:
    """Replace each allow-listed table function in FROM (:data:`SAFE_TABLE_FUNCTIONS`) whose
    arguments read nothing by ``(SELECT NULL AS out, ...) AS alias``, in place, for the
    analysis only (the SQL that runs is the one written): its outputs are then names of the
    query that read no table. Any other table function stays, and is refused. Returns whether
    it replaced one."""
    allowed = SAFE_TABLE_FUNCTIONS.get(dialect.lower(), frozenset())
    replaced = False
    for table in list(tree.find_all(exp.Table)):
        func = table.this
        if not isinstance(func, exp.Func) or isinstance(table.parent, exp.JoinHint):
            continue
        try:
            name = resolve_function(func, sql, dialect.lower())
        except Exception:  # noqa: BLE001 - a call that cannot be named is not allow-listed
            continue
        if name not in allowed:
            continue
        if any(func.find_all(exp.Column, exp.Star, exp.Query, exp.Subquery, exp.Table, exp.Dot)):
            continue  # an argument reads something: refused as a table function
        alias = table.args.get("alias")
        alias_name = alias.name if isinstance(alias, exp.TableAlias) and alias.name else name
        if isinstance(alias, exp.TableAlias) and alias.columns:
            outputs = [c.name for c in alias.columns]
        else:  # PostgreSQL names the one column after the alias, DuckDB after the function
            outputs = list(dict.fromkeys([alias_name.lower(), name]))
        select = exp.select(*(exp.alias_(exp.Null(), o) for o in outputs))
        table.replace(exp.Subquery(this=select, alias=exp.TableAlias(this=exp.to_identifier(alias_name))))
        replaced = True
    return replaced
