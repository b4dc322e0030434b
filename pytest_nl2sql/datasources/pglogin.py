"""What makes a PostgreSQL login privileged, asked of the server once per adapter (the adapter
refuses such a login unless the datasource sets ``allow_privileged_login``)."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["login_privileges"]

# What makes a PostgreSQL login privileged: superuser or role/database creation rights,
# membership in the server-file roles, any write privilege on a table, CREATE on a schema
# or on the database.
_PG_PRIVILEGES_SQL = """
SELECT r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolbypassrls,
  EXISTS (SELECT 1 FROM pg_roles s WHERE s.rolname IN
            ('pg_write_server_files', 'pg_read_server_files', 'pg_execute_server_program',
             'pg_signal_backend', 'pg_write_all_data')
          AND pg_has_role(current_user, s.oid, 'USAGE')),
  EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
            AND n.nspname NOT IN ('pg_catalog', 'information_schema')
            AND n.nspname NOT LIKE 'pg\\_%'
            AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE')
                 OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))),
  EXISTS (SELECT 1 FROM pg_namespace n
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
            AND n.nspname NOT LIKE 'pg\\_%' AND has_schema_privilege(n.oid, 'CREATE')),
  has_database_privilege(current_database(), 'CREATE'),
  current_user
FROM pg_roles r WHERE r.rolname = current_user
"""
_PG_PRIVILEGE_NAMES = (
    "is a superuser",
    "may create roles",
    "may create databases",
    "bypasses row-level security",
    "is a member of a server-file or signal role",
    "may write to a table",
    "may create objects in a schema",
    "may create schemas in the database",
)


def login_privileges(connection: Any) -> tuple[str, list[str]] | None:
    """The login's name and what makes it privileged (empty: a reader), or None when the
    server does not say. The connection's transaction is rolled back afterwards."""
    cursor = connection.cursor()
    try:
        cursor.execute(_PG_PRIVILEGES_SQL)
        row = cursor.fetchone()
    finally:
        with contextlib.suppress(Exception):
            cursor.close()
        with contextlib.suppress(Exception):
            connection.rollback()
    if row is None:
        return None
    return row[-1], [text for flag, text in zip(row[:-1], _PG_PRIVILEGE_NAMES, strict=True) if flag]
