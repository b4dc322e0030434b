"""Hooks of pytest-nl2sql (loaded in ``pytest_addhooks``).

Implement them in a ``conftest.py`` or a plugin. Scorers are the main extension point: every
registered ``pytest_nl2sql_score`` implementation is called for every item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_nl2sql.scoring.scorers import Score, ScoreContext


@pytest.hookspec(firstresult=True)
def pytest_nl2sql_make_engine(config: pytest.Config, project: Any) -> Any:
    """Build the engine under test, once per process (each xdist worker builds its own).

    Called lazily before the first item runs. ``project`` is the loaded ``nl2sql.yaml``
    (a ``pytest_nl2sql.config.Config``) or None when there is none. Return any object that
    implements ``pytest_nl2sql.engine.protocol.Engine`` (``route`` and ``answer``); the first
    non-None result wins. The plugin's own implementation, which runs last, builds the
    engine ``nl2sql.yaml`` names (the reference engine by default).
    """


@pytest.hookspec
def pytest_nl2sql_score(context: ScoreContext) -> Score | list[Score] | None:
    """Score one item's answer.

    Called once per item after the engine answered (or routed, in mode ``retrieval``), for
    every implementation. Return a ``Score`` (or a list of them), or None when the scorer
    does not apply. A score with ``passed=False`` and ``gating=True`` fails the item; every
    score is reported. The built-in scorers (outcome, result_match, routing,
    retrieval_recall) are the plugin ``nl2sql_scorers``: ``-p no:nl2sql_scorers`` removes them.
    """


@pytest.hookspec
def pytest_nl2sql_report(config: pytest.Config, report: Any) -> None:
    """Called once on the controller after the run with the aggregated ``RunReport``."""
