from tests.demo_fixtures import _isolated_cache, demo_dir  # noqa: F401  (shared fixtures)
