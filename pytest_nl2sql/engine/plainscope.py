"""The validator's route around sqlglot's ``qualify`` (about two thirds of its time): what a
plain query reads, read off its scopes directly, and the scope helpers the validator shares.

:func:`resolve_plain` answers only for an allow-listed shape of query and returns None for
anything else, which then goes through ``qualify`` (engine/validator.py): the verdicts are the
same either way (docs/datasources.md#how-the-validator-resolves-columns).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

__all__ = ["derived_outputs", "find_source", "is_projection", "resolve_plain", "table_sources"]


def find_source(scope: Scope | None, qualifier: str) -> exp.Table | Scope | None:
    """The table or derived scope ``qualifier`` names, looking outward for correlated refs."""
    while scope is not None:
        source = scope.sources.get(qualifier)
        if source is not None:
            return source
        scope = scope.parent
    return None


def table_sources(scope: Scope) -> list[exp.Table]:
    return [s for _, s in scope.selected_sources.values() if isinstance(s, exp.Table)]


def derived_outputs(scope: Scope) -> set[str] | None:
    """Output names of a derived table or CTE scope; None when it cannot be told (e.g. UNION)."""
    try:
        return {name.lower() for name in scope.expression.named_selects}
    except Exception:  # noqa: BLE001 - a shape sqlglot cannot name; do not guess
        return None


def is_projection(node: exp.Expression) -> bool:
    return isinstance(node.parent, exp.Select) and node.arg_key == "expressions"


#: The only clauses a SELECT may have for :func:`resolve_plain` to resolve it (anything else:
#: sqlglot's ``qualify`` decides), and the only parts of a join and of a table it may use.
_SIMPLE_SELECT_ARGS = frozenset({"expressions", "distinct", "from_", "joins", "where", "group", "having",
                                 "order", "limit", "offset", "with_"})
_SIMPLE_SETOP_ARGS = frozenset({"this", "expression", "distinct", "with_", "limit", "offset"})
_SIMPLE_JOIN_ARGS = frozenset({"this", "on", "side", "kind"})
_SIMPLE_JOIN_KINDS = frozenset({"", "INNER", "OUTER", "CROSS"})
_SIMPLE_TABLE_ARGS = frozenset({"this", "alias"})
#: Nodes that only qualify resolves (whole-row values, field access, table functions, pivots).
_NOT_SIMPLE = (exp.TableColumn, exp.Dot, exp.UDTF, exp.Pivot, exp.Lateral)


def _only(node: exp.Expression, allowed: frozenset[str]) -> bool:
    return all(k in allowed for k, v in node.args.items() if v is not None and v != [] and v is not False)


def resolve_plain(
    scopes: list[Scope], known: Any
) -> tuple[set[str], set[tuple[str, str]]] | None:
    """What a plain query reads, resolved without sqlglot's ``qualify`` (about 2/3 of the
    validator's time), or None when the query is not plain enough to be sure.

    Allow-list: every scope is a SELECT with ordinary clauses (or a set operation of them);
    every source is a base table by name (optionally aliased) or a subquery/CTE whose output
    names are known; joins are ON/CROSS joins (no USING, no NATURAL); every column is either
    qualified by a source that has it, or unqualified and owned by exactly one source of its
    own scope while naming no select alias and no source. Anything else - correlated
    unqualified names, ambiguity, a missing name, alias references, ``USING`` - returns None
    and ``qualify`` decides, so the verdicts are the same either way.
    """
    tables: set[str] = set()
    columns: set[tuple[str, str]] = set()
    for scope in scopes:
        expr = scope.expression
        if isinstance(expr, exp.SetOperation):
            if not _only(expr, _SIMPLE_SETOP_ARGS):
                return None
            with_ = expr.args.get("with_")
            if with_ is not None and with_.args.get("recursive"):
                return None
            continue
        if not isinstance(expr, exp.Select) or not _only(expr, _SIMPLE_SELECT_ARGS):
            return None
        if not (scope.is_root or scope.is_subquery or scope.is_derived_table or scope.is_cte or scope.is_set_operation):
            return None
        with_ = expr.args.get("with_")
        if with_ is not None and with_.args.get("recursive"):
            return None
        for join in expr.args.get("joins") or ():
            if not _only(join, _SIMPLE_JOIN_ARGS) or (join.kind or "").upper() not in _SIMPLE_JOIN_KINDS:
                return None
        owned: list[tuple[exp.Table | None, frozenset[str] | dict[str, str]]] = []
        for _, source in scope.selected_sources.values():
            if isinstance(source, exp.Table):
                if not isinstance(source.this, exp.Identifier) or not _only(source, _SIMPLE_TABLE_ARGS):
                    return None
                alias = source.args.get("alias")
                if alias is not None and alias.columns:
                    return None
                cols = known.columns.get(source.name)
                if not cols:
                    return None
                tables.add(source.name)
                owned.append((source, cols))
            elif isinstance(source, Scope):
                wrapper = source.expression.parent
                if isinstance(wrapper, exp.Subquery) and not _only(wrapper, _SIMPLE_TABLE_ARGS):
                    return None
                alias = wrapper.args.get("alias") if wrapper is not None else None
                if isinstance(alias, exp.TableAlias) and alias.columns:
                    return None
                outputs = derived_outputs(source)
                if outputs is None or "*" in outputs:
                    return None
                owned.append((None, frozenset(outputs)))
            else:
                return None
        aliases = {p.alias for p in expr.expressions if isinstance(p, exp.Alias)}
        names: set[str] = set()
        s: Scope | None = scope
        while s is not None:
            names.update(s.sources)
            s = s.parent
        for node in scope.walk():
            if isinstance(node, _NOT_SIMPLE):
                return None
            if isinstance(node, exp.Star):
                if node.args.get("except_") or node.args.get("replace") or node.args.get("rename"):
                    return None
                if is_projection(node):  # SELECT *: every column of every base table here
                    for table, cols in owned:
                        if table is not None:
                            columns.update((table.name, c) for c in cols)
                continue
            if not isinstance(node, exp.Column):
                continue
            if isinstance(node.this, exp.Star):
                if not is_projection(node):
                    return None
                src = scope.sources.get(node.table)
                if isinstance(src, exp.Table):
                    columns.update((src.name, c) for c in known.columns[src.name])
                elif not isinstance(src, Scope):
                    return None
                continue
            if not isinstance(node.this, exp.Identifier) or node.args.get("db") or node.args.get("catalog"):
                return None
            name = node.name
            if node.table:
                src = find_source(scope, node.table)
                if isinstance(src, exp.Table):
                    if name not in known.columns.get(src.name, {}):
                        return None
                    columns.add((src.name, name))
                elif not isinstance(src, Scope) or name not in (derived_outputs(src) or ()):
                    return None
                continue
            if name in aliases or name in names:
                return None
            owners = [table for table, cols in owned if name in cols]
            if len(owners) != 1:
                return None
            if owners[0] is not None:
                columns.add((owners[0].name, name))
    return tables, columns
