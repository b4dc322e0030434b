"""Accounting of mode full: tokens, cost, latency and cache use, per item and for the run.

Each engine call gets its own ``MeteredLLM``, a thin proxy over the process's shared LLM
client: it passes the attempt (the repeat index, which the response cache keys on), counts the
calls, cache hits and misses, tokens and the model's time into a ``Usage``, and tells the
fail-fast counter how each call went. The usage lands in the item's record (``"llm"``), so it
crosses xdist with the report; the controller sums the records (``reporting.figures.usage_figures``).

The progress line (``Progress``): on a run longer than ``PROGRESS_EVERY_S`` seconds (env
``NL2SQL_PROGRESS_S``), the controller prints every so often how many items are done, the
cost so far and an ETA -- not with ``-q``, and only on the controller under xdist.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_nl2sql.llm.base import LLMError, LLMResult, PlanRequest

__all__ = ["MeteredLLM", "Progress", "Usage", "billed_after_stop"]

PROGRESS_EVERY_S = 30.0


class Usage:
    """What one engine call used of the LLM (thread-safe: one call may ask several times)."""

    FIELDS = ("calls", "failed_connects", "cache_hits", "cache_misses", "input_tokens", "output_tokens", "llm_latency_s")

    def __init__(self) -> None:
        self.calls = 0  # calls that reached the server (a cached answer did not)
        self.failed_connects = 0  # calls that never reached it (LLMError kind "connection"): counted apart
        self.cache_hits = 0
        self.cache_misses = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.llm_latency_s = 0.0
        self._lock = threading.Lock()

    def add(self, result: LLMResult | LLMError, latency: float, *, cache_on: bool) -> None:
        cached = bool(getattr(result, "cached", False))
        never = isinstance(result, LLMError) and result.kind == "connection"
        with self._lock:
            self.calls += 0 if cached or never else 1
            self.failed_connects += 1 if never else 0
            if cache_on:
                self.cache_hits += 1 if cached else 0
                self.cache_misses += 0 if cached else 1
            self.input_tokens += int(getattr(result, "input_tokens", 0) or 0)
            self.output_tokens += int(getattr(result, "output_tokens", 0) or 0)
            self.llm_latency_s += latency

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in self.FIELDS}
        out["llm_latency_s"] = round(self.llm_latency_s, 6)
        return out


def empty_usage() -> dict[str, Any]:
    return Usage().to_dict()


class MeteredLLM:
    """The LLM an engine is handed in mode full: the shared client, metered (module doc)."""

    def __init__(self, inner: Any, usage: Usage, *, attempt: int = 0, failfast: Any = None) -> None:
        self._inner = inner
        self._usage = usage
        self._attempt = attempt
        self._failfast = failfast

    def __getattr__(self, name: str) -> Any:  # an engine may read the client's model, base_url, ...
        return getattr(self._inner, name)

    def __repr__(self) -> str:
        return f"MeteredLLM({self._inner!r}, attempt={self._attempt})"

    def generate_plan(self, request: PlanRequest) -> LLMResult:
        reason = self._failfast.reason if self._failfast is not None else None
        if reason is not None:
            raise LLMError(reason, kind="stopped")
        cache_on = getattr(self._inner, "cache", None) is not None
        started = time.perf_counter()
        try:
            if getattr(self._inner, "supports_attempt", False):
                result = self._inner.generate_plan(request, attempt=self._attempt)
            else:
                result = self._inner.generate_plan(request)
        except LLMError as exc:
            self._usage.add(exc, time.perf_counter() - started, cache_on=cache_on)
            if self._failfast is not None:
                self._failfast.failed(exc)
            raise
        self._usage.add(result, time.perf_counter() - started, cache_on=cache_on)
        if self._failfast is not None:
            self._failfast.succeeded()
        return result


# -- the progress line --------------------------------------------------------------------
class Progress:
    """A plugin object of the controller: every so often, items done, cost so far and an ETA."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.total = 0
        self.done = 0
        self.cost = 0.0
        self.started = time.monotonic()
        self.last = self.started
        try:
            self.every = float(os.environ.get("NL2SQL_PROGRESS_S", PROGRESS_EVERY_S))
        except ValueError:
            self.every = PROGRESS_EVERY_S

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = max(self.total, len(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.total = max(self.total, len(ids))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "nl2sql", None)
        if record is None:
            return
        self.done += 1
        self.cost += float(record.get("cost_usd") or 0.0)
        now = time.monotonic()
        if int(getattr(self.config.option, "verbose", 0) or 0) < 0 or now - self.last < self.every or now - self.started < self.every:
            return
        self.last = now
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            if getattr(getattr(reporter, "_tw", None), "width_of_current_line", 0):
                reporter.write("\n")  # after the progress dots
            reporter.write_line(self.line(now))

    def line(self, now: float) -> str:
        elapsed = now - self.started
        total = max(self.total, self.done)
        eta = elapsed / self.done * (total - self.done) if self.done else 0.0
        return (
            f"nl2sql: {self.done}/{total} items, ${self.cost:.4f} so far, "
            f"{elapsed:.0f} s elapsed, ETA {int(eta) // 60}:{int(eta) % 60:02d}"
        )


def billed_after_stop(ledger: Any, summary: dict[str, Any], records: Any) -> dict[str, Any]:
    """What the ledger says was billed beyond the records (calls in flight or prefetched when
    the run stopped, answered after its last item): the summary's ``cost_usd`` then counts it,
    and ``after_stop`` says how many engine calls and how much. Nothing when all is recorded."""
    if ledger is None:
        return {}
    from pytest_nl2sql.plugin.ledger import MICRO, to_micro

    try:
        billed, settled = ledger.spent_micro(), ledger.calls()
    except Exception:  # noqa: BLE001 -- a ledger that cannot be read adds nothing to the report
        return {}
    recorded = to_micro(summary.get("cost_usd") or 0.0)
    if billed <= recorded:
        return {}
    views = records.views() if records is not None else []
    asked = sum(len(v.get("attempts") or ()) or 1 for v in views if v.get("status") is not None)
    extra = round((billed - recorded) / MICRO, 6)
    return {"cost_usd": round(billed / MICRO, 6), "after_stop": {"calls": max(0, settled - asked), "cost_usd": extra}}


def register_full_run(config: pytest.Config, run: Any, records: Any = dict) -> None:
    """Register the controller's plugin objects of mode full at scale: the progress line,
    ``--nl2sql-estimate`` and ``--nl2sql-save-predictions`` (workers need none of them);
    ``records`` returns the run's records so far (the session's spool)."""
    if hasattr(config, "workerinput"):
        return
    settings = run.settings
    config.pluginmanager.register(Progress(config), "nl2sql_progress")
    if settings.estimate:
        if getattr(config.option, "numprocesses", None):
            raise pytest.UsageError("--nl2sql-estimate runs in one process: run it without -n (or with -n 0)")
        from pytest_nl2sql.plugin.estimate import Estimate

        config.pluginmanager.register(Estimate(run), "nl2sql_estimate")
    if settings.save_predictions is not None:
        from pytest_nl2sql.reporting.predictions_out import PredictionsOut

        config.pluginmanager.register(PredictionsOut(settings.save_predictions, records), "nl2sql_save_predictions")
