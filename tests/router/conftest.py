"""Small datasources a router test can reason about: the demo's music store, its support desk
and its web analytics, described as the demo describes them."""

from __future__ import annotations

import pytest

from pytest_nl2sql.demo.catalog import DEMO_DATASOURCES
from pytest_nl2sql.engine.router import DatasourceDoc

CHINOOK_TABLES = {
    "Artist": ["ArtistId", "Name"],
    "Album": ["AlbumId", "Title", "ArtistId"],
    "Track": [
        "TrackId",
        "Name",
        "AlbumId",
        "MediaTypeId",
        "GenreId",
        "Composer",
        "Milliseconds",
        "Bytes",
        "UnitPrice",
    ],
    "Genre": ["GenreId", "Name"],
    "MediaType": ["MediaTypeId", "Name"],
    "Playlist": ["PlaylistId", "Name"],
    "PlaylistTrack": ["PlaylistId", "TrackId"],
    "Employee": [
        "EmployeeId",
        "LastName",
        "FirstName",
        "Title",
        "ReportsTo",
        "HireDate",
        "City",
        "Country",
    ],
    "Customer": [
        "CustomerId",
        "FirstName",
        "LastName",
        "Company",
        "City",
        "Country",
        "Email",
        "SupportRepId",
    ],
    "Invoice": ["InvoiceId", "CustomerId", "InvoiceDate", "BillingCity", "BillingCountry", "Total"],
    "InvoiceLine": ["InvoiceLineId", "InvoiceId", "TrackId", "UnitPrice", "Quantity"],
}
SUPPORT_TABLES = {
    "customers": ["customer_id", "first_name", "last_name", "email", "country", "plan"],
    "products": ["product_id", "name", "category"],
    "teams": ["team_id", "name"],
    "agents": ["agent_id", "team_id", "name", "hired_on"],
    "tickets": [
        "ticket_id",
        "customer_id",
        "product_id",
        "agent_id",
        "priority",
        "status",
        "channel",
        "subject",
        "created_at",
        "first_response_at",
        "resolved_at",
    ],
    "ticket_events": ["event_id", "ticket_id", "agent_id", "kind", "at"],
    "sla_targets": ["priority", "first_response_minutes", "resolution_minutes"],
    "satisfaction_ratings": ["ticket_id", "score", "comment", "rated_at"],
}
WEB_TABLES = {
    "visitors": ["visitor_id", "country", "first_visit_at", "is_registered"],
    "sessions": [
        "session_id",
        "visitor_id",
        "device_id",
        "traffic_source",
        "referrer",
        "campaign_id",
        "landing_page",
        "started_at",
        "duration_seconds",
        "pages",
    ],
    "page_views": ["view_id", "session_id", "page", "viewed_at", "time_on_page_seconds"],
    "events": ["event_id", "view_id", "event_type", "at"],
    "campaigns": ["campaign_id", "name", "channel", "started_on", "ended_on", "budget"],
    "devices": ["device_id", "device_type", "os", "browser"],
    "conversions": ["conversion_id", "session_id", "kind", "revenue", "at"],
}
SAMPLES = {
    "chinook": {
        "Genre.Name": ["Rock", "Jazz", "Metal", "Blues"],
        "MediaType.Name": ["MPEG audio file", "AAC audio file"],
    },
    "support": {
        "tickets.status": ["open", "pending", "resolved"],
        "tickets.channel": ["email", "chat", "phone"],
    },
    "webanalytics": {
        "devices.device_type": ["mobile", "desktop", "tablet"],
        "sessions.traffic_source": ["organic", "paid", "referral"],
    },
}
TABLES = {"chinook": CHINOOK_TABLES, "support": SUPPORT_TABLES, "webanalytics": WEB_TABLES}


def demo_doc(name: str, *, with_words: bool = True) -> DatasourceDoc:
    """The demo datasource ``name``: its tables, samples and (with_words) its description and
    sample questions."""
    demo = DEMO_DATASOURCES[name]
    return DatasourceDoc(
        name=name,
        description=demo.description if with_words else "",
        sample_questions=demo.sample_questions if with_words else (),
        tables=TABLES[name],
        samples=SAMPLES[name],
    )


@pytest.fixture
def demo_docs() -> list[DatasourceDoc]:
    return [demo_doc(name) for name in ("chinook", "support", "webanalytics")]


@pytest.fixture
def schema_only_docs() -> list[DatasourceDoc]:
    """The same datasources with no description or sample questions: names only."""
    return [demo_doc(name, with_words=False) for name in ("chinook", "support", "webanalytics")]
