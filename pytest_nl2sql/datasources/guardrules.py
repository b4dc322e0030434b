"""The statement guard's rules (see :mod:`.guard`): the checks that decide a verdict on a parsed
query. Imported by the guard only when a verdict is not remembered, since they need sqlglot.

The rules are those of the guard's docstring: one read-only query, the syntax allow-list
(:mod:`.syntax`), the functions allow-list (:mod:`.functions`), no ``INTO``, no row locks, no
data-changing statement inside, no file reads on DuckDB.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pytest_nl2sql.datasources.functions import allowed_functions, table_functions
from pytest_nl2sql.datasources.guardbase import (
    StatementRefused,
    StatementUnparseable,
    sqlglot_dialect,
)
from pytest_nl2sql.datasources.syntax import (
    cast_type_refusal,
    column_refusal,
    dot_shape,
    node_allowed,
    type_allowed,
)

__all__ = ["check_now", "resolve_function"]

_ADMITTED = "only a single read-only SELECT (or WITH ... SELECT) may run"

# Nodes that never belong inside a read-only query, wherever they appear.
_WRITE_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Drop",
        "Create",
        "Alter",
        "Copy",
        "Command",
        "Pragma",
        "Attach",
        "Detach",
        "Install",
        "Set",
        "Transaction",
        "Commit",
        "Rollback",
        "Use",
        "Into",
        "Lock",
        "TruncateTable",
        "Grant",
        "Revoke",
        "Analyze",
    )
    if hasattr(exp, name)
)


# Words that start a statement in some SQL dialect; a parse that reads one of them as a
# column name ("INSTALL httpfs" outside DuckDB) is reported as that statement.
_STATEMENT_KEYWORDS = frozenset(
    """ALTER ANALYZE ATTACH BEGIN CALL CHECKPOINT CLUSTER COMMENT COMMIT COPY CREATE DEALLOCATE
    DECLARE DELETE DETACH DISCARD DO DROP EXECUTE EXPLAIN EXPORT FETCH GRANT IMPORT INSERT
    INSTALL LISTEN LOAD LOCK MERGE MOVE NOTIFY PRAGMA PREPARE REASSIGN REFRESH REINDEX RELEASE
    REPLACE RESET REVOKE ROLLBACK SAVEPOINT SECURITY SET SHOW START TRUNCATE UNLISTEN UPDATE
    UPSERT USE VACUUM""".split()
)
_FIRST_WORD_RE = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*([A-Za-z_]+)", re.DOTALL)


def check_now(sql: str, dialect: str, parse: Callable[[str, str | None], list[exp.Expression]]) -> None:
    """The guard's verdict on ``sql``, computed: return for one read-only query, raise
    ``StatementRefused`` otherwise. ``parse`` is :func:`.guard.parse_shared`."""
    read = sqlglot_dialect(dialect)
    statements = _parse(sql, read, parse)
    if not statements:
        raise StatementRefused(f"the SQL is empty ({_ADMITTED})")
    if len(statements) > 1:
        kinds = ", ".join(_statement_kind(s) for s in statements)
        raise StatementRefused(
            f"{len(statements)} statements given ({kinds}): {_ADMITTED}, with no ';' between statements"
        )
    root = statements[0]
    if isinstance(root, (exp.Condition, exp.Alias)):  # "SELEC", "1 + 1", "INSTALL httpfs"
        keyword = _first_keyword(sql)
        if keyword in _STATEMENT_KEYWORDS:
            raise StatementRefused(f"{keyword} is not allowed: {_ADMITTED}")
        raise StatementUnparseable(
            f"the SQL is not a statement: {root.sql()[:60]!r} (write one plain SELECT)"
        )
    if not _is_query(root):
        raise StatementRefused(f"{_statement_kind(root)} is not allowed: {_ADMITTED}")
    listed = getattr(statements, "nodes", None)  # parse_bounded's list of root's nodes
    _check_inside(root, sql, dialect.lower(), listed[0] if listed else None)


class _Quiet(logging.Filter):
    """Drops the sqlglot logger's records below ERROR while this thread parses for the guard
    ("falling back to Command" is reported by us). A filter, not ``setLevel``: setting a level
    clears the cache of every logger of the process, twice per parse."""

    def __init__(self) -> None:
        super().__init__()
        self.parsing = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not getattr(self.parsing, "on", False)


_QUIET = _Quiet()


def _parse(sql: str, read: str | None, parse: Callable[[str, str | None], list[exp.Expression]]) -> list[exp.Expression]:
    sqlglot_logger = logging.getLogger("sqlglot")
    if _QUIET not in sqlglot_logger.filters:
        sqlglot_logger.addFilter(_QUIET)
    _QUIET.parsing.on = True
    try:
        return parse(sql, read)
    except (ParseError, TokenError) as error:
        keyword = _first_keyword(sql)
        if keyword in _STATEMENT_KEYWORDS:
            raise StatementRefused(f"{keyword} is not allowed: {_ADMITTED}") from None
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise StatementUnparseable(
            f"the SQL could not be parsed as {read or 'generic SQL'}: {first} (write one plain SELECT)"
        ) from None
    finally:
        _QUIET.parsing.on = False


def _first_keyword(sql: str) -> str | None:
    match = _FIRST_WORD_RE.match(sql)
    return match.group(1).upper() if match else None


def _is_query(node: exp.Expression) -> bool:
    if isinstance(node, exp.Subquery):
        return _is_query(node.this)
    return isinstance(node, (exp.Select, exp.Union, exp.Intersect, exp.Except))


def _statement_kind(node: exp.Expression) -> str:
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    if isinstance(node, exp.Values):
        return "VALUES"
    if _is_query(node):
        return "SELECT"
    key = node.key.upper()
    return {"CREATE": "CREATE", "TRUNCATETABLE": "TRUNCATE"}.get(key, key)


#: What :func:`_check_inside` checks on a node, per (dialect, node class): the flags below,
#: each one ``isinstance`` test of the rules, answered once per class instead of once per node
#: (most nodes -- names, literals, comparisons -- need none of them).
_WRITE, _INTO, _BAD_SYNTAX, _CAST, _DOT, _PG_COLUMN, _SELECT, _FUNC, _TABLE = (1 << i for i in range(9))
_PLANS: dict[str, dict[type, int]] = {}


def _plan(kind: type[exp.Expression], dialect: str) -> int:
    flags = 0
    if issubclass(kind, _WRITE_NODES):
        flags |= _WRITE | (_INTO if issubclass(kind, exp.Into) else 0)
    else:  # the syntax allow-list (_check_syntax), in its order
        flags |= 0 if type_allowed(kind, dialect) else _BAD_SYNTAX
        flags |= _CAST if issubclass(kind, (exp.Cast, exp.TryCast)) else 0
        flags |= _DOT if issubclass(kind, exp.Dot) else 0
        flags |= _PG_COLUMN if issubclass(kind, exp.Column) and dialect in ("postgresql", "postgres") else 0
    flags |= _SELECT if issubclass(kind, exp.Select) else 0
    flags |= _FUNC if issubclass(kind, exp.Func) else 0
    flags |= _TABLE if issubclass(kind, exp.Table) else 0
    return flags


def _check_inside(root: exp.Expression, sql: str, dialect: str, nodes: list[exp.Expression] | None = None) -> None:
    """Check every node of ``root`` (``nodes``: its nodes in ``walk()`` order, when the parse
    listed them) against the rules, in the order of :func:`_check_syntax` and then the rest."""
    allowed = allowed_functions(dialect)
    tabular = table_functions(dialect)
    plans = _PLANS.get(dialect)
    if plans is None:
        plans = _PLANS[dialect] = {}
    for node in root.walk() if nodes is None else nodes:
        kind = type(node)
        flags = plans.get(kind)
        if flags is None:
            flags = plans[kind] = _plan(kind, dialect)
        if not flags:
            continue
        if flags & (_BAD_SYNTAX | _CAST | _DOT | _PG_COLUMN):
            _check_syntax(node, dialect)
        if flags & _WRITE:
            if flags & _INTO:
                raise StatementRefused(
                    f"SELECT ... INTO creates a table and is not allowed: {_ADMITTED}"
                )
            raise StatementRefused(
                f"{_statement_kind(node)} inside the query is not allowed: {_ADMITTED}"
            )
        if flags & _SELECT:
            if node.args.get("into") is not None:
                raise StatementRefused(
                    f"SELECT ... INTO creates a table and is not allowed: {_ADMITTED}"
                )
            if node.args.get("locks"):
                raise StatementRefused(
                    f"row locks (FOR UPDATE / FOR SHARE) are not allowed: {_ADMITTED}"
                )
        if flags & _FUNC:
            _check_function(node, sql, dialect, allowed, tabular)  # type: ignore[arg-type]
        if flags & _TABLE:
            if isinstance(node.this, exp.Identifier):
                _check_table_name(node, dialect)  # type: ignore[arg-type]
            if dialect == "duckdb" and _looks_like_file(node):  # type: ignore[arg-type]
                raise StatementRefused(
                    f"reading the file {node.name!r} is not allowed: query the datasource's tables"
                )


def _check_syntax(node: exp.Expression, dialect: str) -> None:
    """Refuse a node the syntax allow-list (:mod:`.syntax`) does not admit."""
    if isinstance(node, _WRITE_NODES):
        return  # refused with its own reason by the caller
    if not node_allowed(node, dialect):
        raise StatementRefused(
            f"{_syntax_name(node)} is not allowed: {_ADMITTED}, using only the syntax "
            "pytest-nl2sql knows to be read-only and checks for every role"
        )
    if isinstance(node, (exp.Cast, exp.TryCast)):
        why = cast_type_refusal(node.args.get("to"))
        if why is not None:
            raise StatementRefused(
                f"{why} is not allowed: casts may only name a scalar type (integer, numeric, "
                "text, date, timestamp, boolean, ...)"
            )
    if isinstance(node, exp.Dot):
        why = dot_shape(node)
        if why is not None:
            raise StatementRefused(f"{node.sql()[:80]!r}: {why} is not allowed ({_ADMITTED})")
    if isinstance(node, exp.Column) and dialect in ("postgresql", "postgres"):
        why = column_refusal(node)
        if why is not None:
            raise StatementRefused(f"{why} is not allowed ({_ADMITTED})")


def _syntax_name(node: exp.Expression) -> str:
    names = {"PositionalColumn": "a positional column (#n)", "Pivot": "PIVOT / UNPIVOT",
             "TableSample": "TABLESAMPLE", "Parameter": "a query parameter",
             "Placeholder": "a query parameter", "ObjectIdentifier": "a cast to an object identifier type (regclass, oid, ...)"}
    kind = type(node).__name__
    return names.get(kind, f"the syntax {kind} ({node.sql()[:40]!r})")


# The schema a dialect's built-in functions live in; a call qualified with it is the same
# call unqualified. Any other qualifier names a function the allow-list knows nothing about.
_FUNCTION_SCHEMAS = {"postgresql": "pg_catalog", "postgres": "pg_catalog"}

# Functions sqlglot builds from syntax rather than from a name (``x::int``, ``CASE``,
# ``EXTRACT(... FROM ...)``, ``a -> 'k'``, ``ARRAY[...]``, ``TRIM(BOTH ...)``, ...): these carry no
# name token, and each is a pure built-in of every dialect that has the syntax. The value is
# the name the database itself gives the call, when that matters (SQLite's authorizer
# reports ``x -> 'k'`` as the function ``->``, ``x REGEXP y`` as ``regexp``).
_SYNTAX_FUNCTIONS: dict[type[exp.Expression], str] = {
    cls: name
    for cls_name, name in (
        ("Cast", "cast"),
        ("TryCast", "cast"),
        ("Case", "case"),
        ("If", "case"),
        ("Extract", "extract"),
        ("Array", "array"),
        ("Struct", "struct"),
        ("Exists", "exists"),
        ("Collate", "collate"),
        ("Unnest", "unnest"),
        ("Explode", "unnest"),
        ("Paren", "paren"),
        ("JSONExtract", "->"),
        ("JSONExtractScalar", "->>"),
        ("JSONBExtract", "->"),
        ("JSONBExtractScalar", "->>"),
        ("JSONBContains", "?"),
        ("RegexpLike", "regexp"),
        ("RegexpILike", "regexp"),
        ("ArrayContainsAll", "@>"),
        ("ArrayContainedBy", "<@"),
        ("ArrayOverlaps", "&&"),
        ("CurrentDate", "current_date"),
        ("CurrentTime", "current_time"),
        ("CurrentTimestamp", "current_timestamp"),
        ("Localtime", "localtime"),
        ("Localtimestamp", "localtimestamp"),
        ("Trim", "trim"),
        ("Substring", "substring"),
        ("StrPosition", "position"),
        ("GroupConcat", "group_concat"),
        ("Ceil", "ceil"),
        ("Floor", "floor"),
        ("Chr", "char"),
        ("Initcap", "initcap"),
        ("Normalize", "normalize"),
        ("Overlay", "overlay"),
        ("TsOrDsToTimestamp", "cast"),
        ("TsOrDsToDate", "cast"),
        ("Interval", "interval"),
        ("ArgMax", "arg_max"),
        ("ArgMin", "arg_min"),
        ("Max", "max"),
        ("Min", "min"),
        ("ApproxQuantile", "approx_quantile"),
        ("Quantile", "quantile"),
        ("PercentileCont", "percentile_cont"),
        ("PercentileDisc", "percentile_disc"),
        ("WithinGroup", "within group"),
        ("Filter", "filter"),
        ("Window", "over"),
        ("Columns", "columns"),
    )
    if (cls := getattr(exp, cls_name, None)) is not None
}
# Syntax whose name is the operator itself on every dialect: always allowed.
_ALWAYS_ALLOWED_SYNTAX = frozenset(
    {"cast", "case", "extract", "array", "struct", "exists", "collate", "paren", "interval",
     "within group", "filter", "over", "@>", "<@", "&&", "?"}
)
# Syntax whose database-side name must be on the dialect's list (on SQLite ``REGEXP`` calls
# a user function ``regexp`` that is not there; DuckDB's ``COLUMNS(*)`` is not SQL).
_SYNTAX_NAMED_BY_DIALECT = {
    "sqlite": {"regexp": "regexp"},
    "postgresql": {"regexp": None, "->": None, "->>": None},
    "duckdb": {"regexp": None},
}


def resolve_function(node: exp.Func, sql: str, dialect: str) -> str | None:
    """The name the database gives the call ``node`` of ``sql``, lowercase; None for syntax
    that is a pure built-in wherever it parses (``CAST``, ``CASE``, ``EXTRACT``, ...).

    The name is read as written in ``sql`` (sqlglot records where a call's name token is),
    so ``"pg_read_file"`` and ``PG_READ_FILE`` are both ``pg_read_file``, whatever typed
    node sqlglot made of the call. PostgreSQL keeps the case of a quoted name
    (``"LOWER"`` is not ``lower``), as the database does.
    """
    if isinstance(node, (exp.Binary, exp.Unary)) and not _called_by_name(node, sql):
        # an operator (``a OR b``, ``x -> 'k'``, ``a ~ b``), not a call: pure unless the
        # database runs it as a named function that must be on the list
        syntax = _SYNTAX_FUNCTIONS.get(type(node))
        if syntax is None or syntax in _ALWAYS_ALLOWED_SYNTAX:
            return None
        return _SYNTAX_NAMED_BY_DIALECT.get(dialect, {}).get(syntax, syntax)
    written = _written_name(node, sql, dialect)
    if written is not None:
        if written in _KEYWORD_CALLS.get(dialect, ()) and _unquoted_name(node, sql):
            return None  # ARRAY(subquery): a constructor keyword, not a call
        return written
    if isinstance(node, exp.Anonymous):
        this = node.this
        if isinstance(this, exp.Identifier):
            return _fold(this.name, this.quoted, dialect)
        return _fold(str(this), False, dialect)
    syntax = _SYNTAX_FUNCTIONS.get(type(node))
    if syntax is not None:
        if syntax in _ALWAYS_ALLOWED_SYNTAX:
            return None
        special = _SYNTAX_NAMED_BY_DIALECT.get(dialect, {})
        if syntax in special:
            return special[syntax]
    # sqlglot kept no position for the name (STRING_AGG, CHR, JSON_AGG, ... are parsed by
    # hand): the name the dialect itself writes for this node is the name the database will
    # see (PostgreSQL's string_agg, not sqlglot's group_concat; DuckDB's chr, not char)
    try:
        generated = node.sql(dialect=sqlglot_dialect(dialect))
    except Exception:  # noqa: BLE001 - a node sqlglot cannot write back: refuse by its class
        generated = ""
    called = _GENERATED_CALL_RE.match(generated)
    if called is not None:
        return _fold(called.group(2), bool(called.group(1)), dialect)
    if syntax is not None:
        return syntax
    return f"{type(node).__name__.lower()} (unrecognised syntax)"


# Keywords written like a call that build a value rather than call a function.
_KEYWORD_CALLS = {"postgresql": frozenset({"array"}), "postgres": frozenset({"array"}), "duckdb": frozenset({"array"})}


def _unquoted_name(node: exp.Expression, sql: str) -> bool:
    start = node.meta.get("start")
    return isinstance(start, int) and 0 <= start < len(sql) and sql[start] not in '"`['


_GENERATED_CALL_RE = re.compile(r'\s*(")?([A-Za-z_][A-Za-z0-9_$]*)"?\s*\(')


_NAME_RE = re.compile(r'^(?:"(?:[^"]|"")+"|`(?:[^`]|``)+`|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_$]*)$')


def _called_by_name(node: exp.Expression, sql: str) -> bool:
    """Whether ``node`` was written as ``name(...)`` rather than as an operator."""
    meta = node.meta
    start, end = meta.get("start"), meta.get("end")
    if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start <= end < len(sql):
        return False
    if not _NAME_RE.match(sql[start : end + 1]):
        return False
    rest = _SKIP_RE.match(sql, end + 1)
    position = rest.end() if rest else end + 1
    return sql.startswith("(", position)


_SKIP_RE = re.compile(r"(?:\s+|/\*.*?\*/|--[^\n]*(?:\n|$))*", re.S)


def _written_name(node: exp.Func, sql: str, dialect: str) -> str | None:
    meta = node.meta
    start, end = meta.get("start"), meta.get("end")
    if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start <= end < len(sql):
        return None
    text = sql[start : end + 1]
    if not _NAME_RE.match(text):
        return None
    if text[0] == '"':
        return _fold(text[1:-1].replace('""', '"'), True, dialect)
    if text[0] == "`":
        return _fold(text[1:-1].replace("``", "`"), True, dialect)
    if text[0] == "[":
        return _fold(text[1:-1], True, dialect)
    return _fold(text, False, dialect)


def _fold(name: str, quoted: bool, dialect: str) -> str:
    if quoted and dialect in ("postgresql", "postgres"):
        return name  # a quoted name keeps its case on PostgreSQL
    return name.lower()


def _check_function(
    node: exp.Func, sql: str, dialect: str, allowed: frozenset[str], tabular: frozenset[str]
) -> None:
    name = resolve_function(node, sql, dialect)
    parent = node.parent
    qualifier = None
    if isinstance(parent, exp.Dot) and parent.expression is node:
        qualifier = parent.this
    elif isinstance(parent, exp.Table) and parent.this is node:
        if parent.args.get("catalog") is not None:
            qualifier = exp.Dot(this=parent.args["catalog"], expression=parent.args.get("db"))
        else:
            qualifier = parent.args.get("db")
    if qualifier is not None:
        schema = _FUNCTION_SCHEMAS.get(dialect)
        if not (
            isinstance(qualifier, exp.Identifier)
            and schema is not None
            and _fold(qualifier.name, qualifier.quoted, dialect) == schema
        ):
            shown = f"{qualifier.sql()}.{name or node.sql_name().lower()}"
            raise StatementRefused(
                f"function {shown}() is not allowed: only the built-in functions known to be "
                f"pure may be called ({_ADMITTED}); call them without a schema"
            )
    if name is None:
        return
    if name not in allowed:
        raise StatementRefused(
            f"function {name}() is not allowed: only functions known to be pure may be called "
            f"(it may read or change state outside the query; {_ADMITTED}, using the "
            "datasource's own tables)"
        )
    if _in_from(node) and name not in tabular:
        raise StatementRefused(
            f"function {name}() cannot be read as a table: {_ADMITTED}, reading the "
            "datasource's own tables"
        )
    if dialect == "sqlite" and name in ("printf", "format"):
        _check_sqlite_format(node, name)


# A printf conversion's flags, width and precision: a width or precision given as '*' or
# with more than four digits makes SQLite loop that many times inside one step, where the
# query timeout cannot interrupt it.
_FORMAT_SPEC_RE = re.compile(r"%[-+ #0!,]*(\*|\d*)(?:\.(\*|\d*))?")
_MAX_FORMAT_DIGITS = 4


def _check_sqlite_format(node: exp.Func, name: str) -> None:
    if isinstance(node, exp.Anonymous):  # printf(fmt, ...): the name is `this`
        fmt = node.expressions[0] if node.expressions else None
    else:  # format(fmt, ...) parses to exp.Format, the format as `this`
        fmt = node.this
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise StatementRefused(
            f"{name}() needs its format as a string literal (a computed format could ask "
            f"for unbounded output): {_ADMITTED}"
        )
    for width, precision in _FORMAT_SPEC_RE.findall(fmt.this):
        for part in (width, precision):
            if part == "*" or len(part) > _MAX_FORMAT_DIGITS:
                raise StatementRefused(
                    f"{name}() with a width or precision of '*' or over "
                    f"{'9' * _MAX_FORMAT_DIGITS} is not allowed: it can run unbounded inside "
                    "one step of the query"
                )


def _in_from(node: exp.Func) -> bool:
    parent = node.parent
    if isinstance(parent, exp.Table):
        return parent.this is node
    return isinstance(parent, (exp.From, exp.Join, exp.Lateral)) and parent.this is node


# Tables that are really functions (SQLite's eponymous virtual tables, DuckDB's catalog).
_TABLE_FUNCTION_PREFIXES = {"sqlite": ("pragma_",), "duckdb": ("pragma_", "duckdb_")}


def _check_table_name(table: exp.Table, dialect: str) -> None:
    prefixes = _TABLE_FUNCTION_PREFIXES.get(dialect)
    if prefixes and table.name.lower().startswith(prefixes):
        raise StatementRefused(
            f"function {table.name.lower()}() cannot be read as a table: {_ADMITTED}, "
            "reading the datasource's own tables"
        )


def _looks_like_file(table: exp.Table) -> bool:
    if table.args.get("db") or table.args.get("catalog"):
        return False
    name = table.name
    return any(ch in name for ch in "/\\*") or "://" in name or "." in name
