"""The datasources of a project by name, each adapter created on first use."""

from __future__ import annotations

import difflib
import threading
from collections.abc import Mapping

from pytest_nl2sql.config import Config, DatasourceConfig
from pytest_nl2sql.datasources.adapter import Adapter

__all__ = ["DatasourceRegistry", "UnknownDatasource"]


class UnknownDatasource(KeyError):
    """A datasource name the project does not define; the message lists the known names."""

    def __str__(self) -> str:  # KeyError would show the message's repr
        return str(self.args[0]) if self.args else "unknown datasource"


class DatasourceRegistry:
    """Adapters for a project's datasources; safe to share between threads of one process."""

    def __init__(self, datasources: Mapping[str, DatasourceConfig]) -> None:
        self._configs = dict(datasources)
        self._adapters: dict[str, Adapter] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Config) -> DatasourceRegistry:
        """The registry of every datasource in a loaded ``nl2sql.yaml``."""
        return cls(config.datasources)

    def names(self) -> list[str]:
        """The datasource names, in the order the configuration gives them."""
        return list(self._configs)

    def config(self, name: str) -> DatasourceConfig:
        """The configuration of datasource ``name``."""
        return self._configs[self._resolve(name)]

    def get(self, name: str) -> Adapter:
        """The adapter of datasource ``name`` (exact name, else case-insensitive match)."""
        key = self._resolve(name)
        with self._lock:
            adapter = self._adapters.get(key)
            if adapter is None:
                config = self._configs[key]
                adapter = Adapter(
                    config.name,
                    config.url,
                    row_limit=config.row_limit,
                    timeout_s=config.timeout_s,
                    allow_privileged_login=config.allow_privileged_login,
                    max_result_bytes=config.max_result_bytes,
                    unreachable_after=config.unreachable_after,
                )
                self._adapters[key] = adapter
            return adapter

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self._resolve(name)
        except UnknownDatasource:
            return False
        return True

    def check_logins(self) -> None:
        """Fail early (``QueryError('refused')``) on a PostgreSQL login that could write."""
        for name in self.names():
            self.get(name).check_login()

    def close(self) -> None:
        """Close every adapter's connections; adapters are created again if used later."""
        with self._lock:
            adapters, self._adapters = list(self._adapters.values()), {}
        for adapter in adapters:
            adapter.close()

    def __enter__(self) -> DatasourceRegistry:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _resolve(self, name: str) -> str:
        if name in self._configs:
            return name
        for key in self._configs:
            if key.lower() == name.lower():
                return key
        known = ", ".join(self._configs) or "none"
        hint = difflib.get_close_matches(name, list(self._configs), n=1)
        suggestion = f"did you mean {hint[0]!r}? " if hint else ""
        raise UnknownDatasource(
            f"unknown datasource {name!r} ({suggestion}known datasources: {known})"
        )
