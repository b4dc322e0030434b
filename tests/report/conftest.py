"""Fixtures for the report tests: the plugin tests' demo project and mini suite."""

from __future__ import annotations

from tests.demo_fixtures import _isolated_cache, demo_dir  # noqa: F401  (shared fixtures)
from tests.plugin.conftest import ROUTING_SUITE, project  # noqa: F401  (shared fixtures)
