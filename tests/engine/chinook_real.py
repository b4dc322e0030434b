"""The real Chinook database (read-only, from /work/shared/data) and a DuckDB copy of it.

The copy gives the columns the types a PostgreSQL load of Chinook has (TIMESTAMP dates,
DECIMAL money) while SQLite keeps dates as text, so one plan is run on both storage styles.
Data: the Chinook sample database by Luis Rocha (MIT licence), see its LICENSE.md.
"""

from __future__ import annotations

import csv
import os
import re
import sqlite3
from pathlib import Path

import duckdb

CHINOOK_SQLITE = Path(
    os.environ.get("NL2SQL_CHINOOK_SQLITE", "/work/shared/data/chinook/Chinook_Sqlite.sqlite")
)

#: The tables the documentation's examples read.
TABLES = ("Artist", "Album", "Genre", "Track", "Customer", "Invoice", "InvoiceLine")


def _duck_type(sqlite_type: str) -> str:
    t = sqlite_type.upper()
    if t.startswith("NUMERIC"):
        return re.sub(r"^NUMERIC", "DECIMAL", t)
    if t == "DATETIME":
        return "TIMESTAMP"
    if "CHAR" in t or t == "TEXT":
        return "VARCHAR"
    return t


def copy_to_duckdb(source: Path, target: Path) -> Path:
    """Copy :data:`TABLES` of the Chinook SQLite file into a new DuckDB file."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = duckdb.connect(str(target))
    try:
        for table in TABLES:
            cols = src.execute(f"PRAGMA table_info({table})").fetchall()
            spec = ", ".join(f'"{c[1]}" {_duck_type(c[2])}' for c in cols)
            dst.execute(f'CREATE TABLE "{table}" ({spec})')
            # Bulk load through CSV: row-by-row inserts into DuckDB take seconds.
            csv_path = target.with_name(f"{target.stem}_{table}.csv")
            with csv_path.open("w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows(src.execute(f"SELECT * FROM {table}"))
            dst.execute(f"COPY \"{table}\" FROM '{csv_path}' (HEADER false, NULLSTR '')")
            csv_path.unlink()
    finally:
        src.close()
        dst.close()
    return target
