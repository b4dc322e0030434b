"""The support demo database: Chinook's customers, consistent tickets, realistic skew."""

from __future__ import annotations

import sqlite3
import statistics
from pathlib import Path

import pytest


@pytest.fixture
def support_db(demo_databases: dict[str, Path]) -> sqlite3.Connection:
    connection = sqlite3.connect(demo_databases["support"])
    connection.execute("ATTACH DATABASE ? AS chinook", (str(demo_databases["chinook"]),))
    yield connection
    connection.close()


def _one(db: sqlite3.Connection, query: str):
    return db.execute(query).fetchone()[0]


def test_support_customers_are_chinooks_customers(support_db: sqlite3.Connection) -> None:
    ours = support_db.execute(
        "SELECT customer_id, first_name, last_name, email, country FROM customers ORDER BY 1"
    ).fetchall()
    theirs = support_db.execute(
        "SELECT CustomerId, FirstName, LastName, Email, Country FROM chinook.Customer ORDER BY 1"
    ).fetchall()
    assert len(ours) == 59
    assert ours == theirs


def test_support_tables_and_sizes(support_db: sqlite3.Connection) -> None:
    tables = {r[0] for r in support_db.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")}
    assert tables == {
        "customers", "products", "teams", "agents", "slas", "tickets", "ticket_events", "satisfaction_ratings",
    }
    assert 2000 <= _one(support_db, "SELECT COUNT(*) FROM tickets") <= 5000
    assert _one(support_db, "SELECT COUNT(*) FROM ticket_events") > 3 * _one(support_db, "SELECT COUNT(*) FROM tickets")
    assert [r[0] for r in support_db.execute("SELECT priority FROM slas ORDER BY severity_rank")] == [
        "low", "normal", "high", "urgent",
    ]


def test_support_foreign_keys_all_resolve(support_db: sqlite3.Connection) -> None:
    assert support_db.execute("PRAGMA main.foreign_key_check").fetchall() == []
    assert _one(support_db, """
        SELECT COUNT(*) FROM tickets t LEFT JOIN agents a ON a.agent_id = t.agent_id
        WHERE t.agent_id IS NOT NULL AND a.agent_id IS NULL""") == 0


def test_support_ticket_status_agrees_with_its_history(support_db: sqlite3.Connection) -> None:
    # the last status an event set is the ticket's status
    mismatched = _one(support_db, """
        SELECT COUNT(*) FROM tickets t
        WHERE t.status <> (SELECT e.to_status FROM ticket_events e
                           WHERE e.ticket_id = t.ticket_id AND e.to_status IS NOT NULL
                           ORDER BY e.created_at DESC, e.event_id DESC LIMIT 1)""")
    assert mismatched == 0
    assert _one(support_db, """
        SELECT COUNT(*) FROM tickets WHERE (status IN ('resolved', 'closed')) <> (resolved_at IS NOT NULL)""") == 0
    assert _one(support_db, """
        SELECT COUNT(*) FROM tickets WHERE first_response_at < created_at OR resolved_at < first_response_at""") == 0
    assert _one(support_db, """
        SELECT COUNT(*) FROM ticket_events e JOIN tickets t USING (ticket_id) WHERE e.created_at < t.created_at""") == 0
    assert _one(support_db, "SELECT COUNT(*) FROM tickets WHERE status IN ('open', 'pending')") > 0


def test_support_ratings_belong_to_resolved_tickets(support_db: sqlite3.Connection) -> None:
    assert _one(support_db, """
        SELECT COUNT(*) FROM satisfaction_ratings r JOIN tickets t USING (ticket_id)
        WHERE t.resolved_at IS NULL OR r.rated_at < t.resolved_at""") == 0
    assert support_db.execute("SELECT MIN(rating), MAX(rating) FROM satisfaction_ratings").fetchone() == (1, 5)
    rated = _one(support_db, "SELECT COUNT(*) FROM satisfaction_ratings")
    resolved = _one(support_db, "SELECT COUNT(*) FROM tickets WHERE resolved_at IS NOT NULL")
    assert 0.4 * resolved < rated < resolved


def test_support_dates_are_in_the_chinook_invoice_era(support_db: sqlite3.Connection) -> None:
    first, last = support_db.execute("SELECT MIN(created_at), MAX(created_at) FROM tickets").fetchone()
    assert first >= "2007-01-01 00:00:00" and last < "2012-01-01 00:00:00"
    assert len(first) == len("2007-01-01 00:00:00")


def test_support_data_is_skewed_like_a_real_desk(support_db: sqlite3.Connection) -> None:
    per_customer = [r[0] for r in support_db.execute(
        "SELECT COUNT(*) FROM tickets GROUP BY customer_id ORDER BY 1 DESC")]
    assert per_customer[0] > 8 * per_customer[-1]  # some customers are far busier
    per_product = [r[0] for r in support_db.execute(
        "SELECT COUNT(*) FROM tickets GROUP BY product_id ORDER BY 1 DESC")]
    assert per_product[0] > 5 * per_product[-1]
    by_priority = dict(support_db.execute("SELECT priority, COUNT(*) FROM tickets GROUP BY priority"))
    assert by_priority["low"] > by_priority["normal"] > by_priority["high"] > by_priority["urgent"]
    hours = [r[0] for r in support_db.execute(
        "SELECT (julianday(resolved_at) - julianday(created_at)) * 24 FROM tickets WHERE resolved_at IS NOT NULL")]
    assert statistics.quantiles(hours, n=100)[98] > 10 * statistics.median(hours)  # long tail
