"""Fixtures for the plugin's tests: one demo project per session, a small suite per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import DatasourceRegistry
from pytest_nl2sql.upkeep.regenerate import regenerate
from tests.demo_fixtures import _isolated_cache, demo_dir  # noqa: F401  (shared fixtures)

MINI_SUITE = """\
# A small suite over the demo's Chinook database, for the plugin's own tests.
version: 1
cases:
- id: mini_001
  question: How many customers do we have, by country?
  datasources: [chinook]
  status: approved
  origin: hand
  difficulty: easy
  tags: [aggregation, customers]
  outcome: {admin: allowed, analyst: allowed, viewer: refused}
  tables: [Customer]
  columns: [Customer.Country, Customer.CustomerId]
  order_matters: false
  sql: |
    SELECT Country, COUNT(CustomerId) AS customer_count FROM Customer GROUP BY Country
  plan:
    datasource: chinook
    from: Customer
    select:
    - Country
    - {expr: {count: CustomerId}, alias: customer_count}
    group_by: [Country]
- id: mini_002
  question: How many tracks are there per media type?
  datasources: [chinook]
  status: approved
  origin: hand
  difficulty: medium
  tags: [aggregation, join]
  outcome: {admin: allowed, viewer: allowed}
  tables: [Track, MediaType]
  columns: [MediaType.Name, Track.TrackId]
  order_matters: false
  sql: |
    SELECT m.Name, COUNT(t.TrackId) AS tracks
    FROM Track t JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId
    GROUP BY m.Name
  plan:
    datasource: chinook
    from: {table: Track, alias: t}
    joins:
    - {table: MediaType, alias: m, on: {eq: [m.MediaTypeId, t.MediaTypeId]}}
    select:
    - m.Name
    - {expr: {count: t.TrackId}, alias: tracks}
    group_by: [m.Name]
- id: mini_003
  question: What is the favourite colour of each customer?
  datasources: [chinook]
  status: approved
  origin: hand
  tags: [unanswerable]
  outcome: {admin: unanswerable, viewer: unanswerable}
  sql: null
  plan: {kind: not_answerable, reason: the database holds no colours}
- id: mini_004
  question: Show me the best albums.
  datasources: [chinook]
  status: approved
  origin: hand
  tags: [ambiguous]
  outcome: {admin: clarify}
  sql: null
  plan: {kind: clarify, clarification: "Best by sales or by number of tracks?"}
- id: mini_006
  question: A draft nobody reviewed
  datasources: [chinook]
  status: draft
  origin: seeded
  outcome: {admin: allowed}
  sql: SELECT 1
- id: mini_007
  question: A retired question
  datasources: [chinook]
  status: retired
  origin: hand
  outcome: {admin: allowed}
  sql: SELECT 2
"""


ROUTING_SUITE = """\
version: 1
cases:
- id: route_001
  question: Which support tickets are still open, by priority?
  datasources: [support]
  status: approved
  kind: routing
  origin: hand
  tags: [support]
  outcome: {admin: allowed}
- id: route_002
  question: Which artists have the most albums in the music catalogue?
  datasources: [chinook]
  status: approved
  kind: routing
  origin: hand
  tags: [chinook]
  outcome: {admin: allowed}
- id: route_003
  question: Which website pages got the most page views from mobile devices?
  datasources: [webanalytics]
  status: approved
  kind: routing
  origin: hand
  tags: [webanalytics]
  outcome: {admin: allowed}
"""


@pytest.fixture
def project(pytester: pytest.Pytester, demo_dir: Path) -> Path:
    """A demo project inside pytester's folder (data shared, config copied), with the mini suite."""
    root = pytester.path
    (root / "data").symlink_to(demo_dir / "data")
    shutil.copy(demo_dir / "nl2sql.yaml", root / "nl2sql.yaml")
    (root / "evals").mkdir()
    (root / "evals" / "mini.yaml").write_text(MINI_SUITE)
    (root / "evals.yaml").write_text("suites:\n- evals/mini.yaml\n")
    report = regenerate(root / "evals" / "mini.yaml", DatasourceRegistry.from_config(load_config(root / "nl2sql.yaml")))
    assert not report.failed, report
    return root


#: Two ways xdist is loaded: by its entry point, or by name with autoloading off (an environment
#: made for the job), where pytest registers it as ``xdist.plugin``, not ``xdist``.
LOADED_BY = {
    "entry point": ((), {}),
    "-p xdist.plugin": (("-p", "xdist.plugin", "-p", "pytest_nl2sql.plugin"), {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
}


@pytest.fixture(params=list(LOADED_BY))
def xdist_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The arguments that load xdist one way or the other (and the environment they need)."""
    args, env = LOADED_BY[request.param]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return args
