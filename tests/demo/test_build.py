"""Building the demo databases: byte-identical, all or nothing, and the same in any SQLAlchemy database."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import MetaData

from pytest_nl2sql.demo import (
    DEMO_NAMES,
    TargetNotEmpty,
    UnknownDemoDatabase,
    build,
    build_demo_databases,
    build_sqlite,
    demo_metadata,
    demo_rows,
    load_into,
)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_build_writes_the_three_files(demo_databases: dict[str, Path]) -> None:
    assert set(demo_databases) == {"chinook", "support", "webanalytics"}
    for name, path in demo_databases.items():
        assert path.name == f"{name}.sqlite"
        connection = sqlite3.connect(path)
        try:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        finally:
            connection.close()
    assert sorted(p.name for p in next(iter(demo_databases.values())).parent.iterdir()) == [
        "chinook.sqlite", "support.sqlite", "webanalytics.sqlite",
    ]  # no temporary files left behind


def test_building_twice_gives_byte_identical_files(demo_databases: dict[str, Path], tmp_path: Path) -> None:
    again = build_demo_databases(tmp_path / "again")
    for name in DEMO_NAMES:
        assert _digest(again[name]) == _digest(demo_databases[name]), name


def test_a_failed_build_leaves_the_previous_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = build_sqlite("chinook", tmp_path / "demo.sqlite")
    before = _digest(target)

    def fail_halfway(metadata, data, path):
        path.write_bytes(b"half a database")
        raise OSError("disk full")

    monkeypatch.setattr(build, "_write_sqlite", fail_halfway)
    with pytest.raises(OSError, match="disk full"):
        build_sqlite("support", target)
    assert _digest(target) == before
    assert [p.name for p in tmp_path.iterdir()] == ["demo.sqlite"]


def test_build_replaces_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "demo.sqlite"
    target.write_bytes(b"not a database")
    build_sqlite("chinook", target)
    connection = sqlite3.connect(target)
    try:
        assert connection.execute("SELECT COUNT(*) FROM Customer").fetchone() == (59,)
    finally:
        connection.close()


def test_unknown_names_and_missing_folders_are_explained(tmp_path: Path) -> None:
    with pytest.raises(UnknownDemoDatabase, match="unknown demo database 'nortwind': expected one of chinook, support, webanalytics"):
        build_sqlite("nortwind", tmp_path / "x.sqlite")
    with pytest.raises(FileNotFoundError, match="folder .*missing does not exist"):
        build_sqlite("chinook", tmp_path / "missing" / "chinook.sqlite")


def test_schemas_are_sqlalchemy_metadata_with_rows_for_every_table() -> None:
    for name in DEMO_NAMES:
        metadata = demo_metadata(name)
        assert isinstance(metadata, MetaData)
        rows = demo_rows(name)
        assert set(rows) == set(metadata.tables)
        for table_name, table in metadata.tables.items():
            assert all(len(row) == len(table.columns) for row in rows[table_name]), table_name


def test_generated_rows_are_deterministic() -> None:
    from pytest_nl2sql.demo import support, webanalytics

    assert support.rows.__wrapped__() == support.rows()
    assert webanalytics.rows.__wrapped__() == webanalytics.rows()
    assert support.rows.__wrapped__(seed=7) != support.rows()


def test_load_into_a_sqlalchemy_database_matches_the_built_file(
    demo_databases: dict[str, Path], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'loaded.sqlite'}"
    load_into(url, "support")
    loaded = sqlite3.connect(tmp_path / "loaded.sqlite")
    built = sqlite3.connect(demo_databases["support"])
    try:
        for table in demo_metadata("support").tables:
            query = f"SELECT * FROM {table} ORDER BY 1"
            assert loaded.execute(query).fetchall() == built.execute(query).fetchall(), table
    finally:
        loaded.close()
        built.close()
    with pytest.raises(TargetNotEmpty, match="already has the tables agents, customers"):
        load_into(url, "support")
