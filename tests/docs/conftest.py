"""Fixtures for the documentation tests: one demo project per session, isolated caches."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.demo_fixtures import _isolated_cache, demo_dir  # noqa: F401  (shared fixtures)

from .blocks import named_block


@pytest.fixture
def demo_project(pytester: pytest.Pytester, demo_dir: Path) -> Path:
    """A demo project inside pytester's folder: data shared, config and suites copied."""
    root = pytester.path
    (root / "data").symlink_to(demo_dir / "data")
    for name in ("nl2sql.yaml", "evals.yaml"):
        shutil.copy(demo_dir / name, root / name)
    shutil.copytree(demo_dir / "evals", root / "evals")
    return root


@pytest.fixture
def shop_project(pytester: pytest.Pytester) -> Path:
    """docs/engine.md's third-party engine and its suite, over a shop.sqlite of three albums."""
    root = pytester.path
    for name in ("shop_engine.py", "shop.yaml"):
        (root / name).write_text(named_block("engine.md", name), encoding="utf-8")
    con = sqlite3.connect(root / "shop.sqlite")
    try:
        con.execute("CREATE TABLE album (id INTEGER PRIMARY KEY, title TEXT)")
        con.executemany("INSERT INTO album (title) VALUES (?)", [("Ten",), ("Vs.",), ("Yield",)])
        con.commit()
    finally:
        con.close()
    return root
