"""Upkeep: the commands that keep suites honest, each writing suites only through
``pytest_nl2sql.suitefile.writer``.

Owns ``regenerate`` (expected rows from the database), ``audit`` (findings on a suite),
``seed`` (draft cases from a schema), ``feedback`` (ratings, exported as drafts), ``drafts``
(where drafts may be written) and ``init`` (a new project, the demo). A new upkeep command goes
here as one module.

May import: ``pytest_nl2sql.suitefile``, ``pytest_nl2sql.config``, ``pytest_nl2sql.datasources``,
``pytest_nl2sql.engine``, ``pytest_nl2sql.scoring``, ``pytest_nl2sql.errors``. Never the
plugin: the plugin calls upkeep, not the other way round.
"""
