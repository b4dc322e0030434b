"""The pytest plugin. This module is the entry point (``pytest11: nl2sql``): it registers the
hook specifications and the options, and -- only in a run that uses the plugin
(``options.in_use``) -- the plugin objects (``session.start``); it holds no logic.

The package is the pytest wiring of a run: ``options`` (command line and ini), ``hookspecs``
(the public hooks), ``session`` (collection, upkeep before the run, the controller's report),
``collect`` (suite files, items, roles and shards), ``run`` (the engine, modes, judging an item),
``asking`` and ``concurrency`` (asking the engine, in flight), ``accounting``, ``failfast``,
``estimate`` and ``ledger`` (mode full at scale, the cost cap across workers),
``engine_factory`` (building the engine ``nl2sql.yaml`` names), ``endings`` (runs that end
badly: items without a verdict, SIGTERM, stale reports), ``under_xdist`` (``--dist
loadscope`` by case; a record crosses xdist as one JSON string) and ``memory`` (what pytest
keeps of the reports; the heap frozen for the collector during the run). What the records become --
terminal, JSON, HTML, junitxml, compare, merge, the baseline gate -- is ``reporting/``; a new
report format goes there.

May import every other stage (``suitefile``, ``config``, ``datasources``, ``llm``, ``engine``,
``scoring``, ``upkeep``, ``reporting``); only ``api`` and ``cli`` import it.
"""

from __future__ import annotations

from typing import Any

import pytest

# Only what registering the plugin needs: pytest imports this module in every run where the
# package is installed. The rest (session, engine, sqlglot, SQLAlchemy, drivers) is imported in
# pytest_configure, and only when the run uses the plugin (options.in_use).
from pytest_nl2sql.plugin import hookspecs
from pytest_nl2sql.plugin.options import add_options, in_use


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)
    _no_rewrite(pluginmanager)


def _no_rewrite(pluginmanager: pytest.PytestPluginManager) -> None:
    """pytest marks every module of a plugin's distribution for assertion rewriting: each of
    the package's modules would then be parsed and compiled by pytest's import hook (and, where
    site-packages is read-only, on every run). The package's own ``assert`` statements are
    internal invariants whose message nobody reads, so the marks are taken back here, before any
    module past this one is imported. Tests and conftests are rewritten as ever. (pytest has no
    public call for this; without the attribute nothing changes.)"""
    marked = getattr(getattr(pluginmanager, "rewrite_hook", None), "_must_rewrite", None)
    if isinstance(marked, set):
        marked.difference_update({m for m in marked if m == "pytest_nl2sql" or m.startswith("pytest_nl2sql.")})


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)  # before pytest-testmon reads its environment (session.testmon_environment)
def pytest_configure(config: pytest.Config) -> None:
    if not in_use(config):
        return  # dormant: a project that does not use the plugin pays nothing for it
    from pytest_nl2sql.plugin.options import read_settings
    from pytest_nl2sql.plugin.under_xdist import DeferredStart

    settings = read_settings(config)  # an option mistake is a usage error now, whatever follows
    deferred = DeferredStart.fits(config, settings, _start)
    if deferred is not None:  # xdist's controller: the pipeline once its workers are starting
        config.pluginmanager.register(deferred, "nl2sql_deferred")
        return
    _start(config, settings)


def _start(config: pytest.Config, settings: Any, handed: Any = None) -> Any:
    from pytest_nl2sql.plugin.session import start  # the whole pipeline, loaded on use

    return start(config, settings, handed)
