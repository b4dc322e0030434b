"""A small Chinook-like database for the engine tests, in SQLite and in DuckDB.

The rows are made up for these tests (names borrowed from the Chinook sample). SQLite keeps
dates as text, as the Chinook file does; the DuckDB copy uses TIMESTAMP and DECIMAL columns,
as a PostgreSQL load of Chinook does, so both date representations are exercised.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from pytest_nl2sql.suitefile.values import normalize_row

# table -> [(column, sqlite type, duckdb type)]
TABLES: dict[str, list[tuple[str, str, str]]] = {
    "Artist": [("ArtistId", "INTEGER", "INTEGER"), ("Name", "TEXT", "VARCHAR")],
    "Album": [("AlbumId", "INTEGER", "INTEGER"), ("Title", "TEXT", "VARCHAR"),
              ("ArtistId", "INTEGER", "INTEGER")],
    "Genre": [("GenreId", "INTEGER", "INTEGER"), ("Name", "TEXT", "VARCHAR")],
    "Track": [("TrackId", "INTEGER", "INTEGER"), ("Name", "TEXT", "VARCHAR"),
              ("AlbumId", "INTEGER", "INTEGER"), ("GenreId", "INTEGER", "INTEGER"),
              ("Milliseconds", "INTEGER", "INTEGER"), ("UnitPrice", "NUMERIC(10,2)", "DECIMAL(10,2)")],
    "Employee": [("EmployeeId", "INTEGER", "INTEGER"), ("LastName", "TEXT", "VARCHAR"),
                 ("FirstName", "TEXT", "VARCHAR"), ("Title", "TEXT", "VARCHAR"),
                 ("ReportsTo", "INTEGER", "INTEGER"), ("HireDate", "DATETIME", "TIMESTAMP")],
    "Customer": [("CustomerId", "INTEGER", "INTEGER"), ("FirstName", "TEXT", "VARCHAR"),
                 ("LastName", "TEXT", "VARCHAR"), ("Company", "TEXT", "VARCHAR"),
                 ("City", "TEXT", "VARCHAR"), ("Country", "TEXT", "VARCHAR"),
                 ("Email", "TEXT", "VARCHAR"), ("SupportRepId", "INTEGER", "INTEGER")],
    "Invoice": [("InvoiceId", "INTEGER", "INTEGER"), ("CustomerId", "INTEGER", "INTEGER"),
                ("InvoiceDate", "DATETIME", "TIMESTAMP"), ("BillingCountry", "TEXT", "VARCHAR"),
                ("Total", "NUMERIC(10,2)", "DECIMAL(10,2)")],
    "InvoiceLine": [("InvoiceLineId", "INTEGER", "INTEGER"), ("InvoiceId", "INTEGER", "INTEGER"),
                    ("TrackId", "INTEGER", "INTEGER"), ("UnitPrice", "NUMERIC(10,2)", "DECIMAL(10,2)"),
                    ("Quantity", "INTEGER", "INTEGER")],
}

ROWS: dict[str, list[tuple[Any, ...]]] = {
    "Artist": [(1, "AC/DC"), (2, "Accept"), (3, "Aerosmith"), (4, "Nobody Yet")],
    "Album": [(1, "For Those About To Rock", 1), (2, "Let There Be Rock", 1),
              (3, "Balls to the Wall", 2), (4, "Big Ones", 3)],
    "Genre": [(1, "Rock"), (2, "Jazz"), (3, "Metal")],
    "Track": [
        (1, "For Those About To Rock", 1, 1, 343719, 0.99),
        (2, "Put The Finger On You", 1, 1, 205662, 0.99),
        (3, "Let There Be Rock", 2, 1, 366654, 0.99),
        (4, "Balls to the Wall", 3, 3, 342562, 0.99),
        (5, "Walk On Water", 4, 1, 295551, 1.99),
        (6, "Love In An Elevator", 4, 2, 321828, 1.99),
    ],
    "Employee": [
        (1, "Adams", "Andrew", "General Manager", None, "2002-08-14 00:00:00"),
        (2, "Edwards", "Nancy", "Sales Manager", 1, "2002-05-01 00:00:00"),
        (3, "Peacock", "Jane", "Sales Support Agent", 2, "2002-04-01 00:00:00"),
    ],
    "Customer": [
        (1, "Luís", "Gonçalves", "Embraer", "São José dos Campos", "Brazil", "luisg@embraer.com.br", 3),
        (2, "Leonie", "Köhler", None, "Stuttgart", "Germany", "leonekohler@surfeu.de", 3),
        (3, "François", "Tremblay", None, "Montréal", "Canada", "ftremblay@gmail.com", 3),
        (4, "Frank", "Harris", "Google Inc.", "Mountain View", "USA", "fharris@google.com", 2),
        (5, "Jack", "Smith", "Microsoft", "Redmond", "USA", "jacksmith@microsoft.com", 2),
        (6, "Mark", "Philips", "Telus", "Edmonton", "Canada", "mphilips12@shaw.ca", 2),
    ],
    "Invoice": [
        (1, 2, "2009-01-01 00:00:00", "Germany", 1.98),
        (2, 4, "2009-01-02 00:00:00", "USA", 3.96),
        (3, 1, "2009-02-03 00:00:00", "Brazil", 5.94),
        (4, 4, "2010-03-11 00:00:00", "USA", 8.91),
        (5, 5, "2010-06-12 00:00:00", "USA", 3.96),
        (6, 3, "2010-12-24 00:00:00", "Canada", 1.98),
        (7, 1, "2011-01-05 00:00:00", "Brazil", 13.86),
    ],
    "InvoiceLine": [
        (1, 1, 1, 0.99, 1), (2, 1, 2, 0.99, 1), (3, 2, 3, 0.99, 2), (4, 2, 4, 0.99, 2),
        (5, 3, 5, 1.99, 1), (6, 3, 6, 1.99, 2), (7, 4, 1, 0.99, 9), (8, 5, 5, 1.99, 2),
        (9, 6, 3, 0.99, 2), (10, 7, 6, 1.99, 7),
    ],
}

#: table -> column names, as :func:`validate_sql` and :func:`resolve` take a schema.
SCHEMA: dict[str, list[str]] = {t: [c for c, _, _ in cols] for t, cols in TABLES.items()}


def build_sqlite(path: Path) -> Path:
    """Write the test database as a SQLite file (dates as text)."""
    con = sqlite3.connect(path)
    with con:
        for table, cols in TABLES.items():
            con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t, _ in cols)})")
            marks = ", ".join("?" for _ in cols)
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", ROWS[table])
    con.close()
    return path


def build_duckdb(path: Path) -> Path:
    """Write the test database as a DuckDB file with quoted, case-preserved names."""
    con = duckdb.connect(str(path))
    for table, cols in TABLES.items():
        con.execute(f'CREATE TABLE "{table}" ({", ".join(f"{chr(34)}{c}{chr(34)} {t}" for c, _, t in cols)})')
        marks = ", ".join("?" for _ in cols)
        con.executemany(f'INSERT INTO "{table}" VALUES ({marks})', ROWS[table])
    con.close()
    return path


def run_sql(dialect: str, path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Execute ``sql`` read-only on the database at ``path``; rows in normal form."""
    if dialect == "sqlite":
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return [normalize_row(r) for r in con.execute(sql).fetchall()]
        finally:
            con.close()
    con = duckdb.connect(str(path), read_only=True)
    try:
        return [normalize_row(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


class Policy:
    """A test double of a role's access policy: deny-lists of tables and 'Table.Column'."""

    def __init__(
        self,
        *,
        datasources: Sequence[str] = ("chinook",),
        deny_tables: Sequence[str] = (),
        deny_columns: Sequence[str] = (),
    ) -> None:
        self.datasources = set(datasources)
        self.deny_tables = set(deny_tables)
        self.deny_columns = set(deny_columns)
        self.asked: list[tuple[str, ...]] = []

    def allows_datasource(self, ds: str) -> bool:
        self.asked.append((ds,))
        return ds in self.datasources

    def allows_table(self, ds: str, table: str) -> bool:
        self.asked.append((ds, table))
        return table not in self.deny_tables

    def allows_column(self, ds: str, table: str, column: str) -> bool:
        self.asked.append((ds, table, column))
        return f"{table}.{column}" not in self.deny_columns


def schema_mapping() -> Mapping[str, Sequence[str]]:
    """A fresh copy of :data:`SCHEMA`."""
    return {t: list(c) for t, c in SCHEMA.items()}
