"""Fixtures for the upkeep tests: one demo project per session, and a guard that the
datasources' files are byte for byte the same after every test that uses them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from pytest_nl2sql.config import Config, load_config
from pytest_nl2sql.datasources import DatasourceRegistry
from pytest_nl2sql.upkeep.init import init_demo

DEMO_DATASOURCES = ("chinook", "support", "webanalytics")


@attrs.frozen
class Demo:
    root: Path
    config: Config
    registry: DatasourceRegistry

    def data_files(self) -> list[Path]:
        return sorted((self.root / "data").iterdir())


def digest(paths: list[Path]) -> dict[str, str]:
    """SHA-256 of each file (and of any -wal/-journal beside it) by name."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    root = tmp_path_factory.mktemp("demo")
    init_demo(root)
    config = load_config(root / "nl2sql.yaml")
    registry = DatasourceRegistry.from_config(config)
    yield Demo(root, config, registry)
    registry.close()


@pytest.fixture(autouse=True)
def datasources_unchanged(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test that touches the demo leaves its database files exactly as they were."""
    if "demo" not in request.fixturenames:
        yield
        return
    demo: Demo = request.getfixturevalue("demo")
    before = digest(demo.data_files())
    yield
    assert digest(demo.data_files()) == before, "an upkeep function changed a datasource's files"
