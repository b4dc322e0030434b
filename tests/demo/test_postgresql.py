"""The demo databases load into a real PostgreSQL server and answer like the SQLite files."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy import create_engine, inspect, text

from pytest_nl2sql.demo import demo_metadata, load_into

AGGREGATES = {
    "chinook": [
        'SELECT SUM("Total") FROM "Invoice"',
        'SELECT COUNT(DISTINCT "CustomerId") FROM "Invoice"',
        'SELECT "BillingCountry", SUM("Total") FROM "Invoice" GROUP BY "BillingCountry" ORDER BY 2 DESC, 1 LIMIT 3',
        'SELECT g."Name", COUNT(*) FROM "Track" t JOIN "Genre" g ON g."GenreId" = t."GenreId" '
        'GROUP BY g."Name" ORDER BY 2 DESC, 1 LIMIT 3',
    ],
    "support": [
        "SELECT status, COUNT(*) FROM tickets GROUP BY status ORDER BY status",
        "SELECT t.name, COUNT(r.rating_id), SUM(r.rating) FROM satisfaction_ratings r "
        "JOIN tickets k ON k.ticket_id = r.ticket_id JOIN agents a ON a.agent_id = k.agent_id "
        "JOIN teams t ON t.team_id = a.team_id GROUP BY t.name ORDER BY t.name",
        "SELECT COUNT(*) FROM customers c JOIN tickets k ON k.customer_id = c.customer_id "
        "WHERE c.plan = 'business'",
    ],
}


def _normalise(rows: list[tuple]) -> list[tuple]:
    """SQLite gives floats and PostgreSQL Decimals for money: compare both to the cent."""
    return [
        tuple(round(float(v), 2) if isinstance(v, float | Decimal) else v for v in row) for row in rows
    ]


def test_chinook_and_support_load_into_postgresql_and_agree_with_sqlite(
    postgresql_url: str, demo_databases: dict[str, Path]
) -> None:
    load_into(postgresql_url, "chinook")
    load_into(postgresql_url, "support")

    engine = create_engine(postgresql_url)
    try:
        with engine.connect() as pg:
            tables = set(inspect(pg).get_table_names())
            # CamelCase names were created quoted, so they kept their case
            assert {"InvoiceLine", "PlaylistTrack", "ticket_events"} <= tables
            for name in ("chinook", "support"):
                lite = sqlite3.connect(demo_databases[name])
                try:
                    for table in demo_metadata(name).tables:
                        count = f'SELECT COUNT(*) FROM "{table}"'
                        assert pg.execute(text(count)).scalar() == lite.execute(count).fetchone()[0], table
                    for query in AGGREGATES[name]:
                        expected = _normalise(lite.execute(query).fetchall())
                        assert _normalise([tuple(r) for r in pg.execute(text(query))]) == expected, query
                finally:
                    lite.close()
            assert pg.execute(text('SELECT SUM("Total") FROM "Invoice"')).scalar() == Decimal("2328.60")
            first, last = pg.execute(text('SELECT MIN("InvoiceDate"), MAX("InvoiceDate") FROM "Invoice"')).one()
            assert (first, last) == (datetime(2007, 1, 1), datetime(2011, 12, 22))
            column_type = pg.execute(text(
                "SELECT data_type FROM information_schema.columns "
                "WHERE table_name = 'tickets' AND column_name = 'created_at'"
            )).scalar()
            assert column_type == "timestamp without time zone"
    finally:
        engine.dispose()
