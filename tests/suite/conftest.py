"""Fixtures for the suite loader and writer tests.

Every test gets its own suite cache folder and the default size limit, so a developer's
``~/.cache`` and environment never change what a test sees (and tests never write there).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.suite.corpus import GOLDEN


@pytest.fixture(autouse=True)
def _isolated_suite_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path_factory.mktemp("nl2sql-cache")))
    monkeypatch.delenv("NL2SQL_MAX_SUITE_BYTES", raising=False)


@pytest.fixture
def golden_copy(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a golden file into ``tmp_path`` (bytes unchanged) and return the copy's path."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        target.write_bytes((GOLDEN / name).read_bytes())
        return target

    return copy
