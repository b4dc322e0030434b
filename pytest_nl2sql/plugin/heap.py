"""The garbage collector and the heap a run builds before its first item.

Before the first item runs, a process holds what outlives the run: pytest and its plugins, the
engine, sqlglot, the suites and their cases, the collected items. CPython's collector walks
all of it again at each full collection, and a run of many cheap items allocates enough to
trigger one every few hundred items; pytest itself collects twice more at the end (its
unraisable-exception check). On Spider dev (972 items) those walks were a fifth of a serial
run (docs/benchmarks.md, issue 28 third pass).

So, when the run loop starts, the heap built so far is frozen (``gc.freeze``: moved to a
generation the collector skips; reference counting still frees everything as before, only
cyclic garbage made before that point waits for the end of the run), and it is unfrozen when
pytest's own clean-up is over, so an in-process run (pytester, ``pytest.main``) leaves the
collector as it found it. When something else in the process froze objects first, nothing is
done. Workers of pytest-xdist do the same in their own process.

``gc.get_referrers`` does not see frozen objects. The one caller known at the end of a run is
Hypothesis: its pytest plugin imports it in the terminal summary, and the import asks who
refers to the PRNGs of modules imported earlier (trio's), finds no one and warns. So when the
Hypothesis plugin is active, Hypothesis is imported before the heap is frozen (the process
would import it at the end anyway).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Any

import pytest

__all__ = ["FrozenHeap"]


class FrozenHeap:
    """Registered by ``session.start``: freezes at the run loop, unfreezes at clean-up."""

    def __init__(self, config: pytest.Config) -> None:
        self.frozen = False
        # start() runs in a tryfirst pytest_configure, before pytest's unraisable-exception
        # plugin adds its clean-up; clean-ups run last-in first-out, so this one runs after its
        # gc.collect() and after pytest_unconfigure's.
        config.add_cleanup(self.unfreeze)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        if not self.frozen and gc.get_freeze_count() == 0:
            if session.config.pluginmanager.hasplugin("hypothesispytest") and not hasattr(session.config, "workerinput"):
                with contextlib.suppress(Exception):
                    import hypothesis  # noqa: F401  (module doc: its import reads gc.get_referrers)
            gc.freeze()
            self.frozen = True

    def unfreeze(self) -> None:
        if self.frozen:
            self.frozen = False
            gc.unfreeze()
