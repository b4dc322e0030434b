"""How a run that ends badly is told: items that got no verdict, SIGTERM, stale reports.

* ``missing_items``: every collected nl2sql item without a verdict, with why -- ``crashed``
  (its xdist worker died running it), ``never scheduled`` (a worker died and xdist, past
  ``--max-worker-restart``, gave its items to nobody), ``interrupted`` (Ctrl-C, SIGTERM),
  ``not run`` (``-x``/``--maxfail`` stopped the run).
* ``report_never_scheduled``: after xdist's loop, each never-scheduled item is reported to
  pytest as an error (so the terminal counts, JUnit and ``-r`` list it), as xdist itself
  reports the crashed one.
* ``SigtermAsInterrupt``: in the controller, SIGTERM (CI cancelling a job) raises
  ``KeyboardInterrupt``, so pytest ends the session as after Ctrl-C (exit 2) and the partial
  report is written, marked incomplete (a SIGKILL cannot be caught: see ``remove_stale``).
* ``remove_stale``: as the first item is about to run, the outputs of an earlier run
  (``--nl2sql-out``, ``--nl2sql-html``) are removed, so a run killed outright leaves no
  report that looks current.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

__all__ = ["SigtermAsInterrupt", "guard_junit", "junit_says_incomplete", "missing_items", "remove_stale", "report_never_scheduled"]

CRASHED = "crashed: its xdist worker died while running it"
NEVER_SCHEDULED = "never scheduled: an xdist worker died and no worker was left to run it"
INTERRUPTED = "interrupted: the run was stopped (Ctrl-C or SIGTERM) before it ran"


def rest_why(session: pytest.Session, exitstatus: int, workers_down: bool) -> str:
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return INTERRUPTED
    if workers_down:
        return NEVER_SCHEDULED
    stop = session.shouldfail or session.shouldstop
    if stop:
        return f"not run: the run stopped early ({stop})"
    return "not run: no verdict reached the controller"


def missing_items(collected: Iterable[str], records: Mapping[str, Any], crashed: Iterable[str], why: str) -> list[dict[str, str]]:
    crashed = list(crashed)
    out = [{"nodeid": n, "why": CRASHED} for n in crashed]
    seen = set(records) | set(crashed)
    out += [{"nodeid": n, "why": why} for n in collected if n not in seen]
    return out


def report_never_scheduled(config: pytest.Config, missing: Iterable[Mapping[str, str]]) -> None:
    for m in missing:
        if m["why"] != NEVER_SCHEDULED:
            continue
        path = m["nodeid"].split("::")[0]
        report = pytest.TestReport(
            nodeid=m["nodeid"], location=(path, None, m["nodeid"]), keywords={}, outcome="failed",
            longrepr=f"nl2sql: {m['why']}", when="setup",
        )
        report.nl2sql_missing = m["why"]  # type: ignore[attr-defined]
        config.hook.pytest_runtest_logreport(report=report)


def _junit(config: pytest.Config) -> Any:
    """pytest's junitxml plugin object of this run (``--junitxml``), or None."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest moved it
        return None
    return config.stash.get(xml_key, None)


def junit_says_incomplete(config: pytest.Config, lost: int) -> None:
    """``--junitxml``: the test suite's properties say whether the run was complete
    (``nl2sql_complete``, ``nl2sql_missing``); properties of a testsuite are valid in every
    junit_family."""
    xml = _junit(config)
    if xml is None:
        return
    xml.add_global_property("nl2sql_complete", "false" if lost else "true")
    xml.add_global_property("nl2sql_missing", str(lost))


def junit_clarification(config: pytest.Config, records: Any) -> None:
    """``--junitxml`` with ``--nl2sql-clarify``: the summary's clarification figures as test
    suite properties (``nl2sql_clarification_needed`` ... ``_unnecessary``; valid in xunit2)."""
    xml = _junit(config)
    if xml is None:
        return
    from pytest_nl2sql.scoring.clarification import summary_figures

    for key, value in (summary_figures(list(records)).get("clarification") or {}).items():
        xml.add_global_property(f"nl2sql_clarification_{key}", str(value))


def guard_junit(config: pytest.Config, errors: list[str]) -> None:
    """``--junitxml`` that cannot be written (pytest's own junitxml raises out of
    ``pytest_sessionfinish``, a traceback, and no other output is written after it): one line
    in ``errors`` instead, as every other output (reporting.outputs). pytest offers no hook for
    it, so the plugin wraps junitxml's ``pytest_sessionfinish`` implementation."""
    from pytest_nl2sql.reporting.outputs import write_output

    xml = _junit(config)
    if xml is None:
        return
    for impl in config.pluginmanager.hook.pytest_sessionfinish.get_hookimpls():
        if impl.plugin is xml and not getattr(impl.function, "nl2sql_guarded", False):
            original = impl.function

            def guarded(*args: Any, _original: Any = original, **kwargs: Any) -> None:
                write_output("--junitxml", xml.logfile, lambda: _original(*args, **kwargs), errors)

            guarded.nl2sql_guarded = True  # type: ignore[attr-defined]
            impl.function = guarded


def remove_stale(paths: Iterable[Path | None]) -> None:
    for path in paths:
        if path is None or Path(path).is_symlink():
            continue  # a link the user made stays (the write at the end goes through it)
        try:
            Path(path).unlink()
        except FileNotFoundError:
            pass
        except OSError:
            pass  # not writable either: the write at the end of the run says so


class SigtermAsInterrupt:
    """SIGTERM in the controller ends the session as Ctrl-C does (module doc)."""

    def __init__(self) -> None:
        self.previous: Any = None
        self.installed = False

    def install(self) -> None:
        try:
            if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
                self.previous = signal.signal(signal.SIGTERM, self._handler)
                self.installed = True
        except (ValueError, OSError):  # not the main thread
            pass

    @staticmethod
    def _handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt("SIGTERM")

    def uninstall(self) -> None:
        if self.installed:
            try:
                signal.signal(signal.SIGTERM, self.previous if self.previous is not None else signal.SIG_DFL)
            except (ValueError, OSError):
                pass
            self.installed = False
