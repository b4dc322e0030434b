"""What one role may read: the access policy every SQL path asks (validator, SQLite authorizer)."""

from __future__ import annotations

from fnmatch import fnmatchcase

import attrs

__all__ = ["Glob", "RolePolicy", "parse_glob"]

#: The shapes an nl2sql-engine policy pattern may take.
GLOB_SHAPES = "'*', 'datasource' or 'datasource.schema.table'"


@attrs.frozen
class Glob:
    """One nl2sql-engine policy pattern: ``*``, ``datasource`` or ``datasource.schema.table``,
    each part an ``fnmatch`` glob, matched case-insensitively (stored lowercase). ``schema`` and
    ``table`` are None for a whole datasource."""

    text: str
    datasource: str
    schema: str | None = None
    table: str | None = None

    def covers_datasource(self, datasource: str) -> bool:
        """Whether the pattern can match anything inside ``datasource``."""
        return fnmatchcase(datasource.lower(), self.datasource)

    def covers_all_of(self, datasource: str) -> bool:
        """Whether the pattern matches every table of ``datasource``."""
        whole = self.schema is None or (self.schema == "*" and self.table == "*")
        return whole and self.covers_datasource(datasource)

    def matches(self, datasource: str, schema: str, table: str) -> bool:
        if not self.covers_datasource(datasource):
            return False
        if self.schema is None or self.table is None:
            return True
        return fnmatchcase(schema.lower(), self.schema) and fnmatchcase(table.lower(), self.table)

    @property
    def literal_table(self) -> tuple[str, str] | None:
        """``(datasource, table)`` when the pattern names one table without a glob character."""
        parts = (self.datasource, self.schema, self.table)
        if self.table is None or any(ch in p for p in parts if p for ch in "*?["):
            return None
        return self.datasource, self.table


def parse_glob(text: str) -> Glob:
    """The pattern ``text`` stands for; ``ValueError`` (with the fix) when it has another shape.
    A two-part pattern is refused, as nl2sql-engine refuses it: ``sales.orders`` could mean a
    table in any schema."""
    if text == "*":
        return Glob(text, "*")
    parts = text.split(".")
    if len(parts) == 2 and all(parts):
        datasource, table = parts
        fix = (f"write '{datasource}' for the whole datasource, or '{datasource}.<schema>.*'" if table == "*"
               else f"write '{datasource}.<schema>.{table}' (e.g. {datasource}.main.{table} on SQLite)")
        raise ValueError(f"{text!r} has two parts: {fix}")
    if len(parts) not in (1, 3) or not all(parts):
        raise ValueError(f"{text!r} is not a pattern: use {GLOB_SHAPES}, each part may be a glob")
    lowered = [p.lower() for p in parts]
    return Glob(text, lowered[0]) if len(lowered) == 1 else Glob(text, *lowered)


def _split(table: str, default_schema: str) -> tuple[str, str]:
    schema, dot, name = table.rpartition(".")
    return (schema, name) if dot and schema else (default_schema, table)


@attrs.frozen
class RolePolicy:
    """What one role may read. Names are compared case-insensitively (stored lowercase).

    ``datasources`` is None for ``"*"`` (every datasource). Deny beats allow; a denied table
    denies its columns; ``allow_tables`` (when set) restricts the role to those tables;
    ``allow_columns`` (when set) restricts each table it names to the columns listed.

    A role read from an nl2sql-engine project (docs/nl2sql-engine.md) has ``allow_globs``
    instead: a table is readable when an allow pattern matches ``datasource.schema.table`` and
    no deny pattern does (a table with no schema is in its datasource's default schema,
    ``default_schemas``, else ``main``). Both forms may be set; a table must then pass both.
    """

    name: str
    datasources: frozenset[str] | None = None
    allow_tables: frozenset[tuple[str, str]] | None = None
    allow_columns: frozenset[tuple[str, str, str]] | None = None
    deny_tables: frozenset[tuple[str, str]] = frozenset()
    deny_columns: frozenset[tuple[str, str, str]] = frozenset()
    db_role: str | None = None  # PostgreSQL: the role's queries run under SET ROLE db_role
    allow_globs: tuple[Glob, ...] | None = None
    deny_globs: tuple[Glob, ...] = ()
    #: (datasource, schema) pairs: where a table named without a schema lives
    default_schemas: frozenset[tuple[str, str]] = frozenset()

    def _schema_of(self, datasource: str) -> str:
        ds = datasource.lower()
        return next((s for d, s in self.default_schemas if d == ds), "main")

    def allows_datasource(self, datasource: str) -> bool:
        """Whether the role may query ``datasource`` at all."""
        if self.datasources is not None and datasource.lower() not in self.datasources:
            return False
        if self.allow_globs is not None:
            return any(g.covers_datasource(datasource) for g in self.allow_globs) and not any(
                g.covers_all_of(datasource) for g in self.deny_globs
            )
        return True

    def allows_table(self, datasource: str, table: str) -> bool:
        """Whether the role may read ``table`` (``schema.table`` or a bare name) of ``datasource``."""
        if not self.allows_datasource(datasource):
            return False
        if self.allow_globs is not None:
            schema, name = _split(table, self._schema_of(datasource))
            if not any(g.matches(datasource, schema, name) for g in self.allow_globs):
                return False
            if any(g.matches(datasource, schema, name) for g in self.deny_globs):
                return False
        key = (datasource.lower(), table.lower())
        if key in self.deny_tables:
            return False
        return self.allow_tables is None or key in self.allow_tables

    def allows_column(self, datasource: str, table: str, column: str) -> bool:
        """Whether the role may read ``column`` of ``table`` in ``datasource``."""
        if not self.allows_table(datasource, table):
            return False
        ds, tb = datasource.lower(), table.lower()
        key = (ds, tb, column.lower())
        if key in self.deny_columns:
            return False
        if self.allow_columns is None:
            return True
        named = [c for c in self.allow_columns if c[0] == ds and c[1] == tb]
        return not named or key in self.allow_columns

    def restricts(self, datasource: str) -> bool:
        """Whether anything of ``datasource`` is closed to the role (an allow list, a deny rule,
        or the whole datasource): the validator then refuses uniformly (no existence oracle)."""
        if not self.allows_datasource(datasource):
            return True
        ds = datasource.lower()
        if self.allow_tables is not None or self.allow_columns is not None:
            return True
        if any(e[0] == ds for e in self.deny_tables) or any(e[0] == ds for e in self.deny_columns):
            return True
        if self.allow_globs is not None:
            whole = any(g.covers_all_of(datasource) for g in self.allow_globs)
            return not whole or any(g.covers_datasource(datasource) for g in self.deny_globs)
        return False

    def named_tables(self) -> set[tuple[str, str]]:
        """Every ``(datasource, table)`` the role's rules name literally (a typo there must not
        quietly open or close data: the reference engine checks they exist)."""
        named = set(self.deny_tables) | set(self.allow_tables or ()) | {(d, t) for d, t, _ in self.deny_columns}
        named |= {(d, t) for d, t, _ in self.allow_columns or ()}
        for g in (*(self.allow_globs or ()), *self.deny_globs):
            if g.literal_table is not None:
                named.add(g.literal_table)
        return named
