"""pytest entry point: registers the hooks, the options and the plugin objects. No logic here."""

from __future__ import annotations

import pytest

from . import hookspecs
from .collect import RUN_KEY
from .engine_factory import DefaultEngineFactory
from .options import add_options, read_settings
from .run import Nl2sqlRun
from .scoring import BuiltinScorers
from .session import Nl2sqlSession


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    run = Nl2sqlRun(config, read_settings(config))
    config.stash[RUN_KEY] = run
    config.pluginmanager.register(BuiltinScorers(), "nl2sql_scorers")
    config.pluginmanager.register(DefaultEngineFactory(), "nl2sql_default_engine")
    config.pluginmanager.register(Nl2sqlSession(config, run), "nl2sql_session")
