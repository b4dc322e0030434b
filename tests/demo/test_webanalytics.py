"""The webanalytics demo database: large, consistent and skewed like real traffic."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.demo import demo_metadata


@pytest.fixture
def web_db(demo_databases: dict[str, Path]) -> sqlite3.Connection:
    connection = sqlite3.connect(demo_databases["webanalytics"])
    yield connection
    connection.close()


def _one(db: sqlite3.Connection, query: str):
    return db.execute(query).fetchone()[0]


def test_webanalytics_holds_at_least_100k_rows(web_db: sqlite3.Connection) -> None:
    counts = {t: _one(web_db, f"SELECT COUNT(*) FROM {t}") for t in demo_metadata("webanalytics").tables}
    assert set(counts) >= {"sessions", "page_views", "events", "campaigns", "conversions", "devices"}
    assert sum(counts.values()) >= 100_000
    assert counts["page_views"] > counts["sessions"] > counts["visitors"]


def test_webanalytics_foreign_keys_all_resolve(web_db: sqlite3.Connection) -> None:
    assert web_db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert _one(web_db, """
        SELECT COUNT(*) FROM conversions c JOIN sessions s USING (session_id)
        WHERE c.campaign_id IS NOT s.campaign_id""") == 0


def test_webanalytics_sessions_agree_with_their_page_views(web_db: sqlite3.Connection) -> None:
    disagreeing = _one(web_db, """
        SELECT COUNT(*) FROM sessions s JOIN (
            SELECT session_id, COUNT(*) AS views, SUM(seconds_on_page) AS seconds, MIN(viewed_at) AS first
            FROM page_views GROUP BY session_id) v USING (session_id)
        WHERE v.views <> s.page_view_count OR v.seconds <> s.duration_seconds OR v.first <> s.started_at""")
    assert disagreeing == 0
    assert _one(web_db, """
        SELECT COUNT(*) FROM sessions s JOIN page_views p ON p.session_id = s.session_id AND p.view_number = 1
        WHERE p.page_id <> s.landing_page_id""") == 0
    assert _one(web_db, """
        SELECT COUNT(*) FROM sessions s JOIN visitors v USING (visitor_id) WHERE s.started_at < v.first_seen_at""") == 0
    assert _one(web_db, "SELECT COUNT(*) FROM sessions WHERE (traffic_source = 'campaign') <> (campaign_id IS NOT NULL)") == 0


def test_webanalytics_traffic_is_skewed(web_db: sqlite3.Connection) -> None:
    views = [r[0] for r in web_db.execute("SELECT COUNT(*) FROM page_views GROUP BY page_id ORDER BY 1 DESC")]
    assert views[0] > 20 * views[len(views) // 2]  # Zipf-like page popularity
    one_or_two = _one(web_db, "SELECT AVG(page_view_count <= 2) FROM sessions")
    assert one_or_two > 0.5  # most sessions are short
    campaign_sessions = [r[0] for r in web_db.execute(
        "SELECT COUNT(*) FROM sessions WHERE campaign_id IS NOT NULL GROUP BY campaign_id ORDER BY 1 DESC")]
    assert sum(campaign_sessions[:3]) > 0.7 * sum(campaign_sessions)  # a few campaigns carry the traffic


def test_webanalytics_conversions_make_sense(web_db: sqlite3.Connection) -> None:
    by_type = dict(web_db.execute("SELECT conversion_type, COUNT(revenue) FROM conversions GROUP BY 1"))
    assert set(by_type) == {"purchase", "sign_up", "newsletter"}
    assert by_type["purchase"] > 0 and by_type["sign_up"] == by_type["newsletter"] == 0  # only purchases earn
    assert _one(web_db, "SELECT COUNT(*) FROM conversions WHERE revenue <= 0") == 0
    first, last = web_db.execute("SELECT MIN(started_at), MAX(started_at) FROM sessions").fetchone()
    assert first >= "2011-07-01 00:00:00" and last < "2012-01-01 00:00:00"
