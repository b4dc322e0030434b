"""The pytest plugin. This module is the entry point (``pytest11: nl2sql``): it registers the
hooks, the options and the plugin objects, and holds no logic.

The package is the pytest wiring of a run: ``options`` (command line and ini), ``hookspecs``
(the public hooks), ``session`` (collection, upkeep before the run, the controller's report),
``collect`` (suite files, items, roles and shards), ``run`` (the engine, modes, judging an item),
``asking`` and ``concurrency`` (asking the engine, in flight), ``accounting``, ``failfast``,
``estimate`` and ``ledger`` (mode full at scale, the cost cap across workers),
``engine_factory`` (building the engine ``nl2sql.yaml`` names), ``endings`` (runs that end
badly: items without a verdict, SIGTERM, stale reports) and ``xdist_scope`` (``--dist
loadscope`` by case). What the records become --
terminal, JSON, HTML, junitxml, compare, merge, the baseline gate -- is ``reporting/``; a new
report format goes there.

May import every other stage (``suitefile``, ``config``, ``datasources``, ``llm``, ``engine``,
``scoring``, ``upkeep``, ``reporting``); only ``api`` and ``cli`` import it.
"""

from __future__ import annotations

from pathlib import Path

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
    session = Nl2sqlSession(config, run)
    config.pluginmanager.register(session, "nl2sql_session")
    if config.pluginmanager.hasplugin("xdist"):
        from pytest_nl2sql.plugin.xdist_scope import XdistScope

        config.pluginmanager.register(XdistScope(lambda p: session.is_suite_path(Path(config.rootpath) / p)), "nl2sql_xdist_scope")
