"""The syntax a query may use, per dialect: an allow-list of sqlglot expression node types.

The statement guard walks every node of a parsed query; a node whose type is not listed here
is refused, whatever it is. So a syntax sqlglot parses but this project has never looked at
(DuckDB's ``#4`` positional columns, ``PIVOT``, ``SUMMARIZE`` in a subquery, ``TABLESAMPLE``,
parameters, a time-travel clause, ...) never reaches a database until someone allows it here on
purpose, after checking what it reads and what it calls.

Three kinds of node need more than their type:

* **function calls** (any ``exp.Func`` that is not an operator): admitted here by type, and
  then checked by name against the dialect's allow-list of pure functions by the guard;
  operators that sqlglot models as functions (``x -> 'k'``, ``a ~ b``) must be listed;
* **casts**: only to the scalar types of :data:`CAST_TYPES` (and arrays of them) -- never to
  ``regclass`` / ``regrole`` / ``oid`` (catalog oracles), a table's row type
  (``NULL::"Employee"``) or any other user-defined type;
* **field selection** ``(x).f`` / ``(x).*`` (``exp.Dot``): on PostgreSQL, ``(x).f`` on a value
  that is not a row calls the function ``f(x)``. Only ``(alias).column`` and ``(alias.*).column``
  shapes pass the guard (:func:`dot_shape`); the validator then requires ``alias`` to name a
  table, CTE or subquery of the query and ``column`` one of its columns. A dot before a call
  (``schema.f(x)``, DuckDB's ``x.upper()``) is a qualified call and is checked as one.
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["CAST_TYPES", "cast_type_refusal", "column_refusal", "dot_shape", "node_allowed", "type_allowed",
           "unwrap_paren"]


def _types(names: str) -> frozenset[type[exp.Expression]]:
    return frozenset(cls for name in names.split() if (cls := getattr(exp, name, None)) is not None)


# The shape of a query: statements, clauses, names, literals.
_STRUCTURE = _types(
    """
    Select Union Intersect Except Subquery From Join Where Group Having Order Ordered Limit
    Offset Fetch With CTE Table TableAlias Alias Column Identifier Star Literal Null Boolean
    Var Tuple Paren Distinct GroupingSets Cube Rollup Values Lateral DataType DataTypeParam
    Window WindowSpec Filter WithinGroup IgnoreNulls RespectNulls JSONKeyValue
    HexString BitString ByteString RawString National UnicodeString
    """
)
# Operators and predicates (sqlglot models some of them as functions; they are listed here
# so that an operator sqlglot learns later is refused until someone looks at it).
_OPERATORS = _types(
    """
    And Or Xor Not Neg EQ NEQ GT GTE LT LTE NullSafeEQ NullSafeNEQ Is In Between Exists Any All
    Like ILike LikeAny ILikeAny SimilarTo Glob RegexpLike RegexpILike Escape Collate
    Add Sub Mul Div IntDiv Mod Pow DPipe BitwiseAnd BitwiseOr BitwiseXor BitwiseNot
    BitwiseLeftShift BitwiseRightShift
    Case If Cast TryCast Interval AtTimeZone Extract
    """
)
# Per dialect: the containers and operators of its own types.
_DIALECT_EXTRA = {
    "sqlite": _types("JSONExtract JSONExtractScalar JSONPath JSONPathRoot JSONPathKey JSONPathSubscript"),
    "postgresql": _types(
        """
        Array Bracket Slice JSONExtract JSONExtractScalar JSONBExtract JSONBExtractScalar
        JSONBContains JSONPath JSONPathRoot JSONPathKey JSONPathSubscript ArrayContainsAll
        ArrayContainedBy ArrayOverlaps Kwarg
        """
    ),
    "duckdb": _types(
        """
        Array Bracket Slice Struct PropertyEQ Lambda Qualify JSONExtract JSONExtractScalar
        JSONPath JSONPathRoot JSONPathKey JSONPathSubscript ArrayContainsAll ArrayOverlaps Kwarg
        """
    ),
}
_OPERATOR_BASES = (exp.Binary, exp.Unary, exp.Predicate, exp.Connector)


def _dialect_key(dialect: str) -> str:
    name = dialect.lower()
    return "postgresql" if name == "postgres" else name


def node_allowed(node: exp.Expression, dialect: str) -> bool:
    """Whether a node of ``node``'s type may appear in a query on ``dialect`` (its type alone;
    calls, casts and dots are checked further, see the module docstring)."""
    return type_allowed(type(node), dialect)


def type_allowed(cls: type[exp.Expression], dialect: str) -> bool:
    """:func:`node_allowed` for a node class."""
    if cls in _STRUCTURE or cls in _OPERATORS or cls in _DIALECT_EXTRA.get(_dialect_key(dialect), ()):
        return True
    if cls is exp.Dot:
        return True  # checked by dot_shape
    # a function call, checked by name; an operator modelled as a function must be listed
    return issubclass(cls, exp.Func) and not issubclass(cls, _OPERATOR_BASES)


#: The scalar types a cast may name (sqlglot's type names), arrays of them included.
CAST_TYPES = frozenset(
    getattr(exp.DataType.Type, name)
    for name in """
    BIGINT BIGDECIMAL BOOLEAN BPCHAR CHAR DATE DATETIME DECIMAL DOUBLE FLOAT INT INTERVAL JSON
    JSONB MEDIUMINT NCHAR NVARCHAR SMALLINT TEXT TIME TIMETZ TIMESTAMP TIMESTAMPTZ TIMESTAMPLTZ
    TIMESTAMPNTZ TIMESTAMP_S TIMESTAMP_MS TIMESTAMP_NS TINYINT UBIGINT UINT USMALLINT UTINYINT
    HUGEINT UHUGEINT INT128 UINT128 UUID VARCHAR BLOB VARBINARY BINARY MONEY UDECIMAL UDOUBLE
    """.split()
    if hasattr(exp.DataType.Type, name)
)


def cast_type_refusal(datatype: exp.Expression) -> str | None:
    """Why a cast to ``datatype`` is refused (None: it is a scalar type of :data:`CAST_TYPES`,
    or an array of one)."""
    if not isinstance(datatype, exp.DataType):
        return f"a cast to {datatype.sql()[:60]!r}"
    kind = datatype.this
    if kind == exp.DataType.Type.ARRAY:
        inner = [e for e in datatype.expressions if isinstance(e, exp.DataType)]
        if len(inner) != 1 or len(datatype.expressions) != 1:
            return "a cast to an array of an unknown type"
        return cast_type_refusal(inner[0])
    if kind not in CAST_TYPES:
        return f"a cast to {datatype.sql()[:60]!r}"
    for param in datatype.expressions:  # numeric(10, 2), varchar(20)
        if not isinstance(param, exp.DataTypeParam) or not isinstance(param.this, exp.Literal):
            return f"a cast to {datatype.sql()[:60]!r}"
    return None


def unwrap_paren(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def dot_shape(dot: exp.Dot) -> str | None:
    """Why the field selection ``dot`` is refused by its shape alone (None: it may pass; the
    validator then resolves it). A dot before a call is a qualified call (checked as a call)."""
    field = dot.expression
    if isinstance(field, exp.Func):
        return None  # schema.f(...): the guard checks the qualifier with the call
    base = dot.this
    if not isinstance(base, exp.Paren):
        return "a dotted name the database could read as a function call"
    inner = unwrap_paren(base)
    if not isinstance(field, (exp.Identifier, exp.Star)):
        return "a field of a computed value"
    if isinstance(inner, exp.Column) and not inner.args.get("db") and not inner.args.get("catalog"):
        if isinstance(inner.this, exp.Identifier) and not inner.table:
            return _row_source_refusal(dot, inner.name, field)  # (alias).field
        if isinstance(inner.this, exp.Star) and inner.table:
            return _row_source_refusal(dot, inner.table, field)  # (alias.*).field
    return _CALL


_CALL = "a field of a computed value (on PostgreSQL, (x).f calls the function f(x))"


def _from_source(node: exp.Expression, name: str) -> exp.Expression | None:
    """The FROM / JOIN source that ``name`` names for ``node`` (innermost query first)."""
    wanted = name.lower()
    select = node.find_ancestor(exp.Select)
    while select is not None:
        for holder in [select.args.get("from_")] + list(select.args.get("joins") or ()):
            source = getattr(holder, "this", None)
            if source is not None and source.alias_or_name.lower() == wanted:
                return source
        select = select.find_ancestor(exp.Select)
    return None


def _row_source_refusal(dot: exp.Dot, name: str, field: exp.Expression) -> str | None:
    """``(name).field`` must read a row of the query: ``name`` the alias of a table or CTE
    (whose columns the validator checks), or of a subquery that outputs ``field``; the alias
    of a table function or a column is a value, and ``.field`` on it calls a function."""
    source = _from_source(dot, name)
    if source is None:
        return _CALL
    if isinstance(source, exp.Table):
        return None if isinstance(source.this, exp.Identifier) else _CALL
    query = source.this if isinstance(source, (exp.Subquery, exp.Lateral)) else None
    if isinstance(field, exp.Star):
        return None
    outputs = {n.lower() for n in getattr(query, "named_selects", ())} if query is not None else set()
    return None if field.name.lower() in outputs else _CALL


# The columns of the table functions that return rows (not a scalar): PostgreSQL names them so.
_FUNCTION_OUTPUTS = {
    "json_each": {"key", "value"}, "jsonb_each": {"key", "value"}, "json_each_text": {"key", "value"},
    "jsonb_each_text": {"key", "value"},
}


def column_refusal(column: exp.Column) -> str | None:
    """Why the qualified column ``column`` is refused on PostgreSQL (None: it may pass): on the
    alias ``s`` of a function in FROM, ``s.f`` that is no output of the function calls ``f(s)``."""
    if not column.table or column.args.get("db") or column.args.get("catalog") or isinstance(column.this, exp.Star):
        return None
    source = _from_source(column, column.table)
    if source is None:
        return None  # a table of an outer query, a CTE or a missing name: the validator's
    call = None
    if isinstance(source, exp.Table) and not isinstance(source.this, exp.Identifier):
        call = source.this
    elif isinstance(source, (exp.Unnest, exp.Func)):
        call = source
    elif isinstance(source, exp.Lateral) and isinstance(source.this, exp.Func):
        call = source.this
    if call is None:
        return None
    alias = source.args.get("alias")
    allowed = {source.alias_or_name.lower()}
    if isinstance(alias, exp.TableAlias) and alias.columns:
        allowed = {c.name.lower() for c in alias.columns}
    else:
        name = call.name if isinstance(call, exp.Anonymous) else call.sql_name()
        allowed |= _FUNCTION_OUTPUTS.get(str(name).lower(), set())
    if column.name.lower() in allowed:
        return None
    return f"{column.sql()!r} names no output of the function {source.alias_or_name!r} (on PostgreSQL, s.f calls f(s))"
