"""The validator's rules (see ``engine/validator.py``): what a query reads, resolved with
sqlglot's scopes and ``qualify`` against the schema, then decided by the role's policy.
Imported by the validator only when a verdict is not remembered, since they need sqlglot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

from pytest_nl2sql.datasources.guard import StatementRefused, check_statement, parse_shared
from pytest_nl2sql.datasources.memo import Memo
from pytest_nl2sql.datasources.syntax import unwrap_paren
from pytest_nl2sql.engine.plainscope import (
    derived_outputs,
    find_source,
    is_projection,
    resolve_plain,
    table_sources,
)
from pytest_nl2sql.engine.tablefunctions import safe_table_functions
from pytest_nl2sql.engine.validatorbase import (
    ROWID_NAMES,
    AccessPolicy,
    Validation,
    is_system_catalog,
    policy_restricts,
)
from pytest_nl2sql.engine.validatorbase import invalid as _invalid
from pytest_nl2sql.engine.validatorbase import refused as _refused
from pytest_nl2sql.engine.validatorbase import schema_key as _schema_key
from pytest_nl2sql.engine.validatorbase import unknown as _unknown

__all__ = ["SQLGLOT_SCHEMAS", "validate_now"]

#: The schema qualifier that names the datasource's own tables, per sqlglot dialect.
_OWN_SCHEMAS: dict[str | None, frozenset[str]] = {
    "sqlite": frozenset({"main"}),
    "duckdb": frozenset({"main"}),
    "postgres": frozenset({"public"}),
}


class _Schema:
    """The datasource's schema, looked up case-insensitively."""

    def __init__(self, schema: Mapping[str, Sequence[str]]) -> None:
        self.tables: dict[str, str] = {}
        self.columns: dict[str, dict[str, str]] = {}
        for table, cols in schema.items():
            key = table.lower()
            self.tables[key] = table
            self.columns[key] = {c.lower(): c for c in cols}

    def for_sqlglot(self) -> dict[str, dict[str, str]]:
        return {t: {c: "UNKNOWN" for c in cols} for t, cols in self.columns.items()}


#: The lists of :class:`_Census`, each with the node class it holds (a subclass goes to the first
#: that it is a subclass of).
_LISTED = (("identifiers", exp.Identifier), ("columns", exp.Column), ("tables", exp.Table),
           ("stars", exp.Star), ("ctes", exp.CTE))
#: Per node class: (the census list it goes to or None, whether it is a Dot, a DML or DDL node).
_KINDS: dict[type, tuple[str | None, bool, bool]] = {}


def _kind(kind: type) -> tuple[str | None, bool, bool]:
    listed = next((name for name, base in _LISTED if issubclass(kind, base)), None)
    found = _KINDS[kind] = (listed, issubclass(kind, exp.Dot), issubclass(kind, (exp.DML, exp.DDL)))
    return found


class _Census:
    """The nodes of a tree the rules look up by kind, from one walk (in ``find_all``'s order).

    The rules edit the tree in place: folding names and dropping schema qualifiers keep every
    node listed here; a rule that replaces nodes (a column list alias, a table function) takes
    a new census. Where a tree has no ``Dot``, no aliased column list and no table function,
    the rules about them have nothing to do and are skipped.
    """

    __slots__ = ("columns", "ctes", "dots", "identifiers", "nested_statement", "stars", "tables")

    def __init__(self, tree: exp.Expression, nodes: list[exp.Expression] | None = None) -> None:
        self.identifiers: list[exp.Identifier] = []
        self.tables: list[exp.Table] = []
        self.columns: list[exp.Column] = []
        self.ctes: list[exp.CTE] = []
        self.stars: list[exp.Star] = []
        self.dots = False
        self.nested_statement = False  # a DML or DDL node below the root
        lists = {"identifiers": self.identifiers, "columns": self.columns, "tables": self.tables,
                 "stars": self.stars, "ctes": self.ctes}
        for node in tree.walk() if nodes is None else nodes:  # nodes: the parse's list of them
            kind = type(node)
            listed, dot, statement = _KINDS.get(kind) or _kind(kind)
            if listed is not None:
                lists[listed].append(node)
            if dot:
                self.dots = True
            if statement and node is not tree:
                self.nested_statement = True

    def aliased_column_lists(self) -> bool:
        """Whether a table is aliased with a column list (``FROM t AS a(x, y)``)."""
        for table in self.tables:
            alias = table.args.get("alias")
            if isinstance(alias, exp.TableAlias) and alias.columns:
                return True
        return False

    def whole_row_syntax(self) -> bool:
        """Whether the tree has a ``*``, a ``t.*``, a dotted field or a column named like a SQLite
        rowid: what the whole-row rule (``_whole_rows``) rewrites; without any, it has nothing to do."""
        return bool(self.stars) or self.dots or any(col.name in ROWID_NAMES for col in self.columns)

    def table_functions(self) -> bool:
        """Whether a table of the query is a function call (``FROM generate_series(1, 3)``)."""
        return any(isinstance(table.this, exp.Func) for table in self.tables)


def _lowercase_identifiers(census: _Census) -> dict[str, str]:
    """Fold every identifier to lower case in place; return lower -> first spelling seen."""
    spelled: dict[str, str] = {}
    for ident in census.identifiers:
        name = ident.name
        lower = name.lower()
        spelled.setdefault(lower, name)
        if ident.args.get("this") != lower:
            ident.set("this", lower)
        if ident.args.get("quoted") is not False:
            ident.set("quoted", False)
    return spelled


def _parse(sql: str, dialect: str) -> tuple[exp.Expression, _Census, bool] | Validation:
    """The query's tree, its census and whether the tree is the shared parse (read, never edit)."""
    try:
        statements = parse_shared(sql, dialect)
    except StatementRefused as refusal:  # too long, too big, nested too deeply
        return _invalid(refusal.reason)
    except SqlglotError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        return _invalid(f"The SQL does not parse as {dialect}: {first}")
    if len(statements) != 1:
        return _invalid(f"Expected exactly one SQL statement, got {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        first = sql.split(None, 1)[0].upper() if sql.strip() else ""
        return _invalid(f"Only a read-only query (SELECT) may run, got {first}")
    listed = getattr(statements, "nodes", None)  # parse_bounded listed the tree's nodes
    census = _Census(tree, listed[0] if listed else None)  # the parse is shared: read it, never edit it
    if census.nested_statement:
        return _invalid("Only a read-only query (SELECT) may run")
    if _left_as_parsed(census, dialect):
        return tree, census, True  # nothing before ``qualify`` edits it; ``qualify`` gets a copy
    tree = tree.copy()
    return tree, _Census(tree), False


def _left_as_parsed(census: _Census, dialect: str | None) -> bool:
    """Whether no rule before ``qualify`` edits this tree, so the validator may read the shared
    parse without copying it (SQLite only).

    Every rule that edits in place is named here by what it edits: identifiers already folded
    (lower case, unquoted), no ``*`` (whole rows, ``t.*``), no ``Dot`` (field selections), no
    schema or catalog qualifier on a table or column, no aliased column list, no table function,
    no column spelled like a rowid pseudo-column. Any doubt: the tree is copied, as before.
    """
    if dialect != "sqlite" or census.whole_row_syntax():
        return False
    if census.aliased_column_lists() or census.table_functions():
        return False
    for ident in census.identifiers:
        this = ident.args.get("this")
        if ident.args.get("quoted") is not False or not isinstance(this, str) or this != this.lower():
            return False
    for table in census.tables:
        if table.args.get("db") is not None or table.args.get("catalog") is not None:
            return False
    for col in census.columns:
        args = col.args
        if args.get("db") is not None or args.get("catalog") is not None:
            return False
    return True


def _scopes(tree: exp.Expression) -> list[Scope] | Validation:
    try:
        return traverse_scope(tree)
    except (OptimizeError, SqlglotError) as err:
        return _invalid(f"The SQL could not be analysed: {err}")


def _show(spelled: Mapping[str, str], *parts: str | None) -> str:
    return ".".join(spelled.get(p, p) for p in parts if p)


def _resolve_qualifiers(
    census: _Census, dialect: str | None, spelled: Mapping[str, str]
) -> list[str] | Validation:
    """Strip the datasource's own schema qualifier from tables and columns, in place.

    Returns the names that refer to something outside the schema: another schema or database,
    a system catalog, a ``pragma_*`` table function.
    """
    own = _OWN_SCHEMAS.get(dialect, frozenset())
    ctes = {cte.alias_or_name for cte in census.ctes}
    missing: list[str] = []
    for table in census.tables:
        if isinstance(table.parent, exp.JoinHint):
            continue
        if not isinstance(table.this, exp.Identifier):
            func = table.this
            fname = func.name if isinstance(func, exp.Anonymous) else getattr(func, "key", "")
            if isinstance(fname, str) and fname.lower().startswith("pragma_"):
                missing.append(_show(spelled, table.catalog, table.db, fname.lower()))
            continue
        name, db, catalog = table.name, table.db, table.catalog
        if catalog or (db and db not in own) or is_system_catalog(name, db or None):
            missing.append(_show(spelled, catalog, db, name))
            continue
        if db:
            if name in ctes:
                # main.t is the base table even where a CTE is called t; do not guess
                return _invalid("A schema-qualified table has the name of a CTE; rename the CTE")
            table.set("db", None)
    for col in census.columns:
        db, catalog = col.args.get("db"), col.args.get("catalog")
        if catalog is not None or (db is not None and db.name not in own):
            missing.append(_show(spelled, col.text("catalog"), col.text("db"), col.table, col.name))
        elif db is not None:
            col.set("db", None)
    return missing


def _base_tables(scopes: list[Scope]) -> list[exp.Table] | Validation:
    tables = []
    for scope in scopes:
        for source in scope.selected_sources.values():
            node = source[1]
            if isinstance(node, exp.Table):
                if not isinstance(node.this, exp.Identifier):
                    return _invalid("Table functions are not allowed; read tables by name")
                tables.append(node)
    return tables


def _whole_rows(
    scopes: list[Scope], known: _Schema, dialect: str | None, spelled: Mapping[str, str]
) -> tuple[set[str], list[str], bool]:
    """Find whole-row references and SQLite rowid pseudo-columns; replace them by NULL.

    Returns the tables (schema keys) read whole, the references that name nothing and whether
    it replaced a reference.
    """
    whole: set[str] = set()
    replaced = False
    missing: list[str] = []
    sqlite = dialect == "sqlite"
    found: list[tuple[Scope, exp.Expression]] = []
    for scope in scopes:
        found.extend((scope, n) for n in scope.walk() if type(n) in (exp.Column, exp.Star))
    for scope, node in found:
        if isinstance(node, exp.Star):
            # a bare * in a call other than count(*) reads the rows of every table here
            if isinstance(node.parent, exp.Column | exp.Count) or is_projection(node):
                continue
            if node.parent is None or node.args.get("except_") or node.args.get("replace"):
                continue
            whole.update(t.name for t in table_sources(scope))
            continue
        col: exp.Column = node  # type: ignore[assignment]
        if isinstance(col.this, exp.Star):
            if is_projection(col):
                continue  # t.* in the select list: qualify expands it to t's columns
            src = find_source(scope, col.table)
            if isinstance(src, exp.Table):
                whole.add(src.name)
            elif src is None:
                missing.append(_show(spelled, col.table) + ".*")
                continue
            # a derived table's row is its select list, which its own scope reads
            col.replace(exp.Null())
            replaced = True
            continue
        if not isinstance(col.this, exp.Identifier):
            continue
        name = col.name
        if sqlite and name in ROWID_NAMES:
            if col.table:
                src = find_source(scope, col.table)
                if isinstance(src, exp.Table) and name not in known.columns.get(src.name, {}):
                    whole.add(src.name)
                    col.replace(exp.Null())
                    replaced = True
                continue
            s: Scope | None = scope
            while s is not None:
                tables = table_sources(s)
                if any(name in known.columns.get(t.name, {}) for t in tables):
                    break  # a real column called rowid
                if tables:
                    whole.update(t.name for t in tables)
                    col.replace(exp.Null())
                    replaced = True
                    break
                s = s.parent
            continue
        if sqlite or col.table:
            continue
        src = find_source(scope, name)
        if src is None:
            continue
        # a table name or alias used as a value: the whole row (PostgreSQL, DuckDB)
        if isinstance(src, exp.Table):
            whole.add(src.name)
        is_column = False
        s = scope
        while s is not None and not is_column:
            is_column = any(name in known.columns.get(t.name, {}) for t in table_sources(s))
            s = s.parent
        named = isinstance(scope.expression, exp.Select) and name in {
            n.lower() for n in scope.expression.named_selects
        }
        if not (is_column or named):
            col.replace(exp.Null())
            replaced = True
    return whole, missing, replaced


def _alias_column_lists(census: _Census, known: _Schema) -> Validation | bool:
    """Resolve ``FROM t AS a(x, y, ...)`` on a base table positionally, in place: the table
    becomes ``(SELECT c1 AS x, c2 AS y, ..., the other columns FROM t) AS a``, so a denied
    column read under another name is still that column. More names than columns: invalid.
    Returns whether a table was replaced."""
    if not census.aliased_column_lists():
        return False
    ctes = {cte.alias_or_name for cte in census.ctes}
    referenced = {c.name for c in census.columns}
    every = any(not isinstance(star.parent, exp.Count) for star in census.stars)
    replaced = False
    for table in list(census.tables):
        alias = table.args.get("alias")
        if not isinstance(alias, exp.TableAlias) or not alias.columns:
            continue
        if not isinstance(table.this, exp.Identifier) or table.name in ctes:
            continue  # a table function's or a CTE's output names: resolved by their scopes
        if table.name not in known.columns or table.args.get("db") or table.args.get("catalog"):
            continue  # a missing or foreign table: reported as such later
        real = list(known.columns[table.name])
        names = [c.name for c in alias.columns]
        if len(names) > len(real):
            return _invalid(f"The alias {alias.name} names {len(names)} columns; its table has {len(real)}")
        shown = names + real[len(names):]
        # only the columns the query names (all of them where a * or the row itself is read):
        # a name left out is then missing, never silently read
        keep = [
            (c, n) for c, n in zip(real, shown, strict=True)
            if every or alias.name in referenced or n in referenced
        ] or [(real[0], shown[0])]
        select = exp.select(
            *(exp.alias_(exp.column(c), n) if c != n else exp.column(c) for c, n in keep)
        ).from_(exp.Table(this=exp.to_identifier(table.name)))
        table.replace(exp.Subquery(this=select, alias=exp.TableAlias(this=exp.to_identifier(alias.name))))
        replaced = True
    return replaced


def _narrow_field_selections(scopes: list[Scope], known: _Schema) -> bool:
    """Rewrite ``(alias).col`` and ``(alias.*).col`` as ``alias.col``, in place, so that they
    read that one column and not the whole row. Only where ``alias`` names a table or
    subquery of the query and no column of it (checked by :func:`_field_selections` first).
    Returns whether it rewrote one."""
    narrowed = False
    for scope in scopes:
        for dot in list(scope.walk()):
            if not isinstance(dot, exp.Dot) or not isinstance(dot.this, exp.Paren):
                continue
            inner, field = unwrap_paren(dot.this), dot.expression
            if not isinstance(inner, exp.Column) or not isinstance(field, exp.Identifier):
                continue
            star = isinstance(inner.this, exp.Star)
            if not star and (inner.table or not isinstance(inner.this, exp.Identifier)):
                continue
            name = inner.table if star else inner.name
            if not isinstance(find_source(scope, name), exp.Table | Scope):
                continue
            if not star:
                s: Scope | None = scope
                while s is not None:
                    if any(name in known.columns.get(t.name, {}) for t in table_sources(s)):
                        break  # a column of that name: (name).f is not a row's field
                    s = s.parent
                if s is not None:
                    continue
            dot.replace(exp.column(field.name, table=name))
            narrowed = True
    return narrowed


def _field_selections(scopes: list[Scope], known: _Schema) -> str | None:
    """Why a field selection ``(x).f`` does not resolve (None: each does). On PostgreSQL
    ``(x).f`` calls ``f(x)`` unless ``x`` is a row: ``x`` must name a table, CTE or subquery of
    the query (``(alias)`` or ``(alias.*)``) and ``f`` one of its columns."""
    for scope in scopes:
        for dot in scope.walk():
            if not isinstance(dot, exp.Dot) or isinstance(dot.expression, exp.Func):
                continue
            inner = unwrap_paren(dot.this)
            if not isinstance(dot.this, exp.Paren) or not isinstance(inner, exp.Column):
                return "A dotted name that is not a column cannot be checked"
            name = inner.table if isinstance(inner.this, exp.Star) else inner.name
            src = find_source(scope, name)
            field = dot.expression
            if src is None:
                return f"({name}).{field.sql()} reads a field of a value that is not a row"
            if isinstance(field, exp.Star):
                continue
            if isinstance(src, exp.Table):
                columns = known.columns.get(src.name)
                if columns is not None and field.name not in columns:
                    return f"({name}).{field.name} names no column of {name}"
            elif isinstance(src, Scope):
                outputs = derived_outputs(src)
                if outputs is None or field.name not in outputs:
                    return f"({name}).{field.name} names no column of {name}"
    return None


#: sqlglot's schema object per (dialect, schema): building it normalises every name, which took
#: about 45% of ``qualify``'s time when it was rebuilt for each query. ``qualify`` only reads it.
SQLGLOT_SCHEMAS: Memo[MappingSchema] = Memo(64)


def validate_now(
    sql: str, d: str | None, dialect: str, datasource: str, schema: Mapping[str, Sequence[str]], policy: AccessPolicy
) -> Validation:
    """The validator's verdict on ``sql``, computed (``d``: sqlglot's name of ``dialect``)."""
    restricted = policy_restricts(policy, datasource)
    try:
        verdict = _validate(sql, d, datasource, schema, policy, restricted, dialect)
        if verdict.ok:
            check_statement(sql, dialect)  # the guard's allow-lists: syntax, calls, casts, dots
        return verdict
    except StatementRefused as refusal:  # the SQL alone decides it: no oracle of the schema
        return _invalid(refusal.reason)
    except RecursionError:
        return _invalid("The SQL is nested too deeply to check")


def _validate(
    sql: str,
    d: str | None,
    datasource: str,
    schema: Mapping[str, Sequence[str]],
    policy: AccessPolicy,
    restricted: bool,
    dialect: str = "",
) -> Validation:
    def miss(names: Iterable[str]) -> Validation:
        # one answer for missing and denied names: a restricted role learns nothing
        return _refused() if restricted else _unknown(names)

    def cannot_analyse(text: str) -> Validation:
        return _invalid("The SQL could not be analysed" + ("" if restricted else f": {text}"))

    parsed = _parse(sql, d)
    if isinstance(parsed, Validation):
        return parsed
    tree, census, shared = parsed
    spelled = _lowercase_identifiers(census)
    known = _Schema(schema)
    renamed = _alias_column_lists(census, known)
    if isinstance(renamed, Validation):
        return cannot_analyse(renamed.message) if restricted else renamed
    if renamed:
        census = _Census(tree)
    if census.table_functions() and safe_table_functions(tree, sql, dialect):
        census = _Census(tree)

    qualified = _resolve_qualifiers(census, d, spelled)
    if isinstance(qualified, Validation):
        return qualified
    if qualified:
        return miss(qualified)

    scopes = _scopes(tree)
    if isinstance(scopes, Validation):
        return scopes if not restricted else cannot_analyse("")
    tables = _base_tables(scopes)
    if isinstance(tables, Validation):
        return tables
    missing = [spelled.get(t.name, t.name) for t in tables if t.name not in known.tables]
    if missing:
        return miss(missing)

    narrowed = False
    if census.dots:  # no Dot in the tree: no field selection to check or narrow
        fields = _field_selections(scopes, known)
        if fields is not None:
            return _refused() if restricted else _invalid(fields)
        narrowed = _narrow_field_selections(scopes, known)
    if d == "sqlite" and not census.whole_row_syntax():
        whole, missing, replaced = set(), [], False  # nothing for _whole_rows to find (dots: none narrowed)
    else:
        whole, missing, replaced = _whole_rows(scopes, known, d, spelled)
    if missing:
        return miss(missing)
    if narrowed or replaced:  # the scopes read the tree as it was: read it again
        scopes = _scopes(tree)
        if isinstance(scopes, Validation):
            return scopes if not restricted else cannot_analyse("")

    # Qualified references to columns a base table does not have; sqlglot stops at the first.
    missing = []
    for scope in scopes:
        for col in scope.columns:
            if not col.table or isinstance(col.this, exp.Star):
                continue
            src = find_source(scope, col.table)
            shown = spelled.get(col.name, col.name)
            if isinstance(src, exp.Table):
                if col.name not in known.columns[src.name]:
                    missing.append(f"{known.tables[src.name]}.{shown}")
            elif isinstance(src, Scope):
                outputs = derived_outputs(src)
                if outputs is not None and "*" not in outputs and col.name not in outputs:
                    missing.append(f"{spelled.get(col.table, col.table)}.{shown}")
    if missing:
        return miss(missing)

    simple = resolve_plain(scopes, known) if d in _OWN_SCHEMAS else None
    if simple is not None:
        return _decide(simple[0] | whole, simple[1] | {(t, c) for t in whole for c in known.columns[t]},
                       known, policy, datasource)
    try:
        mapping = SQLGLOT_SCHEMAS.get((d, _schema_key(schema)), lambda: MappingSchema(known.for_sqlglot(), dialect=d))
        tree = qualify(
            tree.copy() if shared else tree, schema=mapping, dialect=d, validate_qualify_columns=False,
            quote_identifiers=False, identify=False,
        )
    except OptimizeError as err:
        text = str(err)
        if text.startswith("Unknown column"):
            return miss([text.split(":", 1)[-1].strip()])
        return cannot_analyse(text)
    scopes = _scopes(tree)
    if isinstance(scopes, Validation):
        return scopes if not restricted else cannot_analyse("")

    read_tables: set[str] = set(whole)
    read_columns: set[tuple[str, str]] = {(t, c) for t in whole for c in known.columns[t]}
    missing = []
    for scope in scopes:
        for source in scope.selected_sources.values():
            if isinstance(source[1], exp.Table):
                read_tables.add(source[1].name)
        for node in scope.walk():
            if isinstance(node, exp.TableColumn):  # sqlglot's own whole-row reference
                src = find_source(scope, node.name)
                if isinstance(src, exp.Table):
                    read_tables.add(src.name)
                    read_columns.update((src.name, c) for c in known.columns[src.name])
        for col in scope.columns:
            if isinstance(col.this, exp.Star):
                continue
            name = col.name
            if not col.table:
                owners = [
                    s.name for _, s in scope.selected_sources.values()
                    if isinstance(s, exp.Table) and name in known.columns[s.name]
                ]
                if len(owners) > 1:
                    if restricted and not all(
                        policy.allows_column(datasource, known.tables[o], known.columns[o][name])
                        for o in owners
                    ):
                        return _refused()
                    return _invalid(f"Column '{spelled.get(name, name)}' is ambiguous; "
                                    "qualify it with its table or alias")
                missing.append(spelled.get(name, name))
                continue
            src = find_source(scope, col.table)
            if isinstance(src, exp.Table):
                if name in known.columns[src.name]:
                    read_columns.add((src.name, name))
                else:
                    missing.append(f"{known.tables[src.name]}.{spelled.get(name, name)}")
            elif isinstance(src, Scope):
                outputs = derived_outputs(src)
                if outputs is not None and name not in outputs:
                    missing.append(f"{spelled.get(col.table, col.table)}.{spelled.get(name, name)}")
            else:
                missing.append(f"{spelled.get(col.table, col.table)}.{spelled.get(name, name)}")
    if missing:
        return miss(missing)
    return _decide(read_tables, read_columns, known, policy, datasource)


def _decide(
    read_tables: set[str], read_columns: set[tuple[str, str]], known: _Schema, policy: AccessPolicy, datasource: str
) -> Validation:
    """The verdict on what a query reads (schema keys): refused if the policy denies any of it."""
    for table in sorted(read_tables):
        if not policy.allows_table(datasource, known.tables[table]):
            return _refused()
    for table, column in sorted(read_columns):
        if not policy.allows_column(datasource, known.tables[table], known.columns[table][column]):
            return _refused()
    return Validation(
        True, "ok", "",
        tables=frozenset(known.tables[t] for t in read_tables),
        columns=frozenset(f"{known.tables[t]}.{known.columns[t][c]}" for t, c in read_columns),
    )
