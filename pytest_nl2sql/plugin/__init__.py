"""The pytest plugin. This module is the entry point (``pytest11: nl2sql``): it registers the
hooks, the options and the plugin objects, and holds no logic.

The package owns the run: ``options`` (command line and ini), ``hookspecs`` (the public hooks),
``session`` (collection, upkeep before the run), ``collect`` (suite files and items), ``run``
(the engine, modes, asking and scoring an item), ``baseline`` (the known-failures gate),
``ledger`` (the cost cap across workers), ``report`` (terminal, JSON, junitxml, GitHub) and
``engine_factory`` (building the engine ``nl2sql.yaml`` names). A new report format goes beside
``report``.

May import every other stage (``suitefile``, ``config``, ``datasources``, ``llm``, ``engine``,
``scoring``, ``upkeep``); only ``api`` and ``cli`` import it.
"""

from __future__ import annotations

import pytest

from pytest_nl2sql.plugin import hookspecs
from pytest_nl2sql.plugin.collect import RUN_KEY
from pytest_nl2sql.plugin.engine_factory import DefaultEngineFactory
from pytest_nl2sql.plugin.options import add_options, read_settings
from pytest_nl2sql.plugin.run import Nl2sqlRun
from pytest_nl2sql.plugin.session import Nl2sqlSession
from pytest_nl2sql.scoring.scorers import BuiltinScorers


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
