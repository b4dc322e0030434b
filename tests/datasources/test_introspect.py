"""Schema introspection: tables, columns, keys, counts, samples; cached per process."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.datasources import Adapter, QueryError, SchemaInfo, introspect

CHINOOK = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "chinook"
    / "Chinook_Sqlite.sqlite"
)


def test_schema_of_the_test_tables(any_adapter: Adapter) -> None:
    schema = introspect(any_adapter)
    assert isinstance(schema, SchemaInfo)
    assert schema.dialect == any_adapter.dialect
    assert set(schema.tables) == {"items", "orders"}
    assert schema.columns_by_table()["items"] == [
        "id",
        "name",
        "price",
        "qty",
        "day",
        "seen_at",
        "data",
        "uid",
        "flag",
    ]
    items, orders = schema.tables["items"], schema.tables["orders"]
    assert items.primary_key == ("id",)
    assert items.column("id").primary_key and not items.column("id").nullable
    assert not items.column("name").nullable and items.column("qty").nullable
    assert "int" in items.column("qty").type.lower()
    assert (items.row_count, orders.row_count) == (4, 3)
    assert sorted(items.column("name").samples) == ["apple", "banana", "cherry"]
    assert items.column("qty").samples == ()
    assert [(fk.columns, fk.ref_table, fk.ref_columns) for fk in orders.foreign_keys] == [
        (("item_id",), "items", ("id",))
    ]
    assert sorted(orders.column("note").samples) == ["again", "first"]


def test_schema_is_cached_until_the_file_changes(sqlite_path: Path) -> None:
    adapter = Adapter("shop", f"sqlite:///{sqlite_path}")
    first = introspect(adapter)
    assert introspect(adapter) is first
    assert introspect(Adapter("again", f"sqlite:///{sqlite_path}")) is first
    adapter.close()
    with sqlite3.connect(sqlite_path) as connection:
        connection.execute("CREATE TABLE added (x TEXT)")
    connection.close()
    assert "added" in introspect(adapter).tables


def test_sample_values_are_capped_at_five_and_shortened(tmp_path: Path) -> None:
    path = tmp_path / "many.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (label VARCHAR(500), n INTEGER)")
        connection.executemany(
            "INSERT INTO t VALUES (?, ?)", [(f"v{i}" + "x" * 200, i) for i in range(20)]
        )
    connection.close()
    column = introspect(Adapter("many", f"sqlite:///{path}")).tables["t"].column("label")
    assert len(column.samples) == 5
    assert all(len(sample) <= 80 for sample in column.samples)


def test_a_wide_sqlite_schema_of_1200_tables(tmp_path: Path) -> None:
    path = tmp_path / "wide.sqlite"
    with sqlite3.connect(path) as connection:
        for i in range(1200):
            connection.execute(
                f"CREATE TABLE t{i:04d} (id INTEGER PRIMARY KEY, name TEXT, amount REAL, "
                f"parent_id INTEGER REFERENCES t{max(i - 1, 0):04d}(id), note VARCHAR(20))"
            )
            connection.execute(f"INSERT INTO t{i:04d} VALUES (1, 'n{i}', 1.5, NULL, 'x')")
    connection.close()
    schema = introspect(Adapter("wide", f"sqlite:///{path}"))
    assert len(schema.tables) == 1200
    last = schema.tables["t1199"]
    assert last.row_count == 1
    assert last.column("name").samples == ("n1199",)
    assert last.foreign_keys[0].ref_table == "t1198"


def test_a_broken_view_does_not_hide_the_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE kept (label TEXT)")
        connection.execute("INSERT INTO kept VALUES ('x')")
        connection.execute("CREATE TABLE gone (a INTEGER)")
        connection.execute("CREATE VIEW broken AS SELECT a FROM gone")
        connection.execute("CREATE VIEW fine AS SELECT label FROM kept")
        connection.execute("PRAGMA legacy_alter_table = ON")
        connection.execute("DROP TABLE gone")
    connection.close()
    schema = introspect(Adapter("broken", f"sqlite:///{path}"))
    assert schema.columns_by_table() == {"kept": ["label"], "broken": [], "fine": ["label"]}
    assert schema.tables["fine"].kind == "view" and schema.tables["fine"].row_count == 1
    assert schema.tables["kept"].column("label").samples == ("x",)


def test_missing_database_is_unreachable(tmp_path: Path) -> None:
    with pytest.raises(QueryError) as caught:
        introspect(Adapter("gone", f"sqlite:///{tmp_path / 'gone.sqlite'}"))
    assert caught.value.kind == "unreachable"
    assert not (tmp_path / "gone.sqlite").exists()


@pytest.mark.skipif(not CHINOOK.is_file(), reason="the shared Chinook database is not present")
def test_chinook() -> None:
    adapter = Adapter("chinook", f"sqlite:///{CHINOOK}")
    schema = introspect(adapter)
    assert len(schema.tables) == 11
    assert schema.tables["Customer"].row_count == 59
    assert schema.tables["Invoice"].row_count == 412
    assert ("CustomerId",) in [fk.columns for fk in schema.tables["Invoice"].foreign_keys]
    assert adapter.execute("SELECT ROUND(SUM(Total), 2) FROM Invoice").rows == [(2328.6,)]
    adapter.close()


def test_a_shape_only_read_fingerprints_as_the_full_one(any_adapter: Adapter) -> None:
    """What a run's provenance reads (reporting/provenance.py): the same tables, columns, types
    and keys as the full read, without a row count or a sample value (a query per table and per
    text column); a full read after it still has them, and a shape-only read after a full one
    is the full one."""
    from pytest_nl2sql.reporting.provenance import schema_fingerprint

    shape = introspect(any_adapter, shape_only=True)
    assert introspect(any_adapter, shape_only=True) is shape  # remembered too
    assert all(t.row_count is None and all(c.samples == () for c in t.columns) for t in shape.tables.values())
    full = introspect(any_adapter)
    assert full is not shape and (full.tables["items"].row_count, full.tables["orders"].row_count) == (4, 3)
    assert sorted(full.tables["items"].column("name").samples) == ["apple", "banana", "cherry"]
    assert schema_fingerprint(shape) == schema_fingerprint(full)
    for name, table in full.tables.items():
        other = shape.tables[name]
        assert [(c.name, c.type, c.primary_key, c.nullable) for c in other.columns] == [
            (c.name, c.type, c.primary_key, c.nullable) for c in table.columns
        ]
        assert other.foreign_keys == table.foreign_keys and other.kind == table.kind
    assert introspect(any_adapter, shape_only=True) is full


def test_the_provenance_benchmark_runs_and_its_fingerprints_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """``benchmarks/bench_provenance.py`` at a small size (docs/benchmarks.md has its real run)."""
    from benchmarks.bench_provenance import main

    assert main(["--rows", "2000", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "one SQLite table of 2,000 rows" in out and "fingerprints agree" in out
