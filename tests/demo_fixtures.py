"""Fixtures shared by the test folders that run pytest on a demo project (imported by their
conftest.py files): one `pytest-nl2sql init --demo` project per session, and a loader cache per test."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_nl2sql.engine.reference  # noqa: F401  (imported once: pytester's in-process runs reuse it)
import pytest_nl2sql.llm  # noqa: F401
from pytest_nl2sql.upkeep.init import init_demo


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh `pytest-nl2sql init --demo` project (built once; tests copy what they change)."""
    root = tmp_path_factory.mktemp("demo")
    init_demo(root)
    return root


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path / "nl2sql-cache"))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
