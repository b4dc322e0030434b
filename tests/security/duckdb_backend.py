"""The DuckDB backend of the attack corpus: the shop's tables in a DuckDB file.

DuckDB has no per-column privileges, so a role's reads are held by the guard and the validator
alone (the adapter path runs only the attacks meant for no role, as regenerate runs them); the
file is opened ``read_only`` with external access off. What must hold is what ``corpus.py``
says for every backend: the folder's bytes unchanged, no denied value in an answer.
"""

from __future__ import annotations

from pathlib import Path

from .harness import AUDIT, CUSTOMERS, PAYROLL, FileBackend

DUCKDB_DDL = [
    'CREATE TABLE "Customer" ("CustomerId" INTEGER PRIMARY KEY, "Name" VARCHAR, "Email" VARCHAR, '
    '"Secret" VARCHAR, "SecretLen" INTEGER GENERATED ALWAYS AS (length("Secret")) VIRTUAL)',
    'CREATE TABLE "Audit" ("note" VARCHAR)',
    'CREATE TABLE "Payroll" ("PayrollId" INTEGER PRIMARY KEY, "Amount" INTEGER)',
]


class DuckdbBackend(FileBackend):
    name = "duckdb"
    dialect = "duckdb"
    db_column_denial = False  # DuckDB has no column privileges: the validator holds the roles
    scheme = "duckdb"
    suffix = ".duckdb"

    def build(self, path: Path) -> Path:
        import duckdb

        con = duckdb.connect(str(path))
        try:
            for statement in DUCKDB_DDL:
                con.execute(statement)
            con.executemany(
                'INSERT INTO "Customer" ("CustomerId", "Name", "Email", "Secret") VALUES (?,?,?,?)', CUSTOMERS
            )
            con.executemany('INSERT INTO "Audit" VALUES (?)', AUDIT)
            con.executemany('INSERT INTO "Payroll" VALUES (?,?)', PAYROLL)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        return path


def duckdb_backend(folder: Path, *, timeout_s: float = 0.5) -> DuckdbBackend:
    return DuckdbBackend(folder, timeout_s)
