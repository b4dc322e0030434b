"""The registry hands out one lazily created adapter per configured datasource."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pytest_nl2sql.config import DatasourceConfig, load_config
from pytest_nl2sql.datasources import DatasourceRegistry, UnknownDatasource


def test_registry_from_config(tmp_path: Path, sqlite_path: Path) -> None:
    config_path = tmp_path / "nl2sql.yaml"
    config_path.write_text(
        "version: 1\ndatasources:\n"
        f"  shop: {{url: 'sqlite:///{sqlite_path.name}', row_limit: 2, timeout_s: 3}}\n"
        "  other: {url: 'sqlite:///missing.sqlite'}\n"
    )
    registry = DatasourceRegistry.from_config(load_config(config_path, environ={}))
    assert registry.names() == ["shop", "other"]
    shop = registry.get("shop")
    assert shop is registry.get("shop") is registry.get("SHOP")
    assert (shop.row_limit, shop.timeout_s) == (2, 3.0)
    result = shop.execute("SELECT id FROM items ORDER BY id")
    assert result.rows == [(1,), (2,)] and result.truncated
    assert "shop" in registry and "nope" not in registry
    registry.close()
    assert shop.execute("SELECT COUNT(*) FROM items").rows == [(4,)]  # reconnects after close
    registry.close()


def test_unknown_name_lists_the_known_ones() -> None:
    registry = DatasourceRegistry(
        {
            "chinook": DatasourceConfig("chinook", "sqlite:////x.sqlite"),
            "support": DatasourceConfig("support", "sqlite:////y.sqlite"),
        }
    )
    with pytest.raises(UnknownDatasource) as caught:
        registry.get("chinok")
    assert isinstance(caught.value, KeyError)
    assert str(caught.value) == (
        "unknown datasource 'chinok' (did you mean 'chinook'? known datasources: chinook, support)"
    )


def test_adapters_are_created_once_across_threads(sqlite_path: Path) -> None:
    registry = DatasourceRegistry({"shop": DatasourceConfig("shop", f"sqlite:///{sqlite_path}")})
    seen = []
    counts = []

    def work() -> None:
        adapter = registry.get("shop")
        seen.append(adapter)
        counts.append(adapter.execute("SELECT COUNT(*) FROM items").rows[0][0])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(adapter) for adapter in seen}) == 1
    assert counts == [4] * 8
    registry.close()
