"""What one role may read: the access policy every SQL path asks (validator, SQLite authorizer)."""

from __future__ import annotations

import attrs

__all__ = ["RolePolicy"]


@attrs.frozen
class RolePolicy:
    """What one role may read. Names are compared case-insensitively (stored lowercase).

    ``datasources`` is None for ``"*"`` (every datasource). Deny beats allow; a denied table
    denies its columns; ``allow_tables`` (when set) restricts the role to those tables;
    ``allow_columns`` (when set) restricts each table it names to the columns listed.
    """

    name: str
    datasources: frozenset[str] | None = None
    allow_tables: frozenset[tuple[str, str]] | None = None
    allow_columns: frozenset[tuple[str, str, str]] | None = None
    deny_tables: frozenset[tuple[str, str]] = frozenset()
    deny_columns: frozenset[tuple[str, str, str]] = frozenset()
    db_role: str | None = None  # PostgreSQL: the role's queries run under SET ROLE db_role

    def allows_datasource(self, datasource: str) -> bool:
        """Whether the role may query ``datasource`` at all."""
        return self.datasources is None or datasource.lower() in self.datasources

    def allows_table(self, datasource: str, table: str) -> bool:
        """Whether the role may read ``table`` of ``datasource``."""
        if not self.allows_datasource(datasource):
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
