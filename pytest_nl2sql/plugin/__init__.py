"""The pytest plugin. This module is the entry point (``pytest11: nl2sql``): it registers the
hooks, the options and the plugin objects, and holds no logic.

The package is the pytest wiring of a run: ``options`` (command line and ini), ``hookspecs``
(the public hooks), ``session`` (collection, upkeep before the run, the controller's report),
``collect`` (suite files, items, roles and shards), ``run`` (the engine, modes, judging an item),
``asking`` and ``concurrency`` (asking the engine, in flight), ``accounting``, ``failfast``,
``estimate`` and ``ledger`` (mode full at scale, the cost cap across workers) and
``engine_factory`` (building the engine ``nl2sql.yaml`` names). What the records become --
terminal, JSON, HTML, junitxml, compare, merge, the baseline gate -- is ``reporting/``; a new
report format goes there.

May import every other stage (``suitefile``, ``config``, ``datasources``, ``llm``, ``engine``,
``scoring``, ``upkeep``, ``reporting``); only ``api`` and ``cli`` import it.
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
