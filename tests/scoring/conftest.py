from tests.demo_fixtures import _isolated_cache, demo_dir  # noqa: F401  (shared fixtures)
from tests.plugin.conftest import project  # noqa: F401  (the demo project fixture)
