"""The default ``pytest_nl2sql_make_engine``: the engine nl2sql.yaml names (or the replay engine)."""

from __future__ import annotations

from typing import Any

import pytest

from .collect import RUN_KEY

__all__ = ["DefaultEngineFactory"]


class DefaultEngineFactory:
    @pytest.hookimpl(trylast=True)
    def pytest_nl2sql_make_engine(self, config: pytest.Config, project: Any) -> Any:
        from .run import import_object

        run = config.stash[RUN_KEY]
        if run.settings.predictions is not None:
            from .engine.replay import ReplayEngine

            return ReplayEngine.from_file(run.settings.predictions, project)
        if project is None:
            return None
        factory = import_object(project.engine)
        return factory(project)
