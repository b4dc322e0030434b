import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nl2sql_engine_project import make_engine_project  # noqa: E402


@pytest.fixture
def engine_project(tmp_path: Path) -> Path:
    """nl2sql-engine 0.7.0's demo project, unchanged, in a temp folder: its nl2sql.yaml."""
    return make_engine_project(tmp_path / "project")
